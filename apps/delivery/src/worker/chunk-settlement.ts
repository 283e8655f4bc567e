/** How a job leaves the worker: acknowledged (done), handed back after a delay, or dropped. */
export type Settlement =
  | { kind: 'ack'; note: string }
  | { kind: 'nak'; delayMs: number; note: string }
  | { kind: 'term'; note: string };

/** "3× a, 1× b": how many messages ended each way. */
function tally(settlements: readonly Settlement[]): string {
  const counts = new Map<string, number>();
  for (const { note } of settlements) counts.set(note, (counts.get(note) ?? 0) + 1);
  return [...counts].map(([note, count]) => `${count}× ${note}`).join('; ');
}

/**
 * A chunk job's settlement from its messages': handed back at the soonest of their delays when
 * any must be looked at again (its messages already recorded are skipped then), otherwise
 * acknowledged. A message dropped alone (term) does not drop the others: it counts as settled.
 */
export function chunkSettlement(settlements: readonly Settlement[]): Settlement {
  const again = settlements.flatMap((settlement) =>
    settlement.kind === 'nak' ? [settlement.delayMs] : [],
  );
  const note = `${settlements.length} messages: ${tally(settlements)}`;
  if (again.length > 0) return { kind: 'nak', delayMs: Math.min(...again), note };
  return { kind: 'ack', note };
}
