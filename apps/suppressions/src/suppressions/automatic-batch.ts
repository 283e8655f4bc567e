import type { AutomaticSuppression, SuppressionDecision } from './delivery-outcome';

/** What handling a delivery event did. */
export type AutomaticOutcome = 'ignored' | 'duplicate' | 'suppressed' | 'already_suppressed';

/** A suppression a batch asks for, with the position of the first event that asked for it. */
export interface WantedSuppression {
  suppression: AutomaticSuppression;
  itemIndex: number;
}

/** One suppression per account, address and domain (the table's unique key). */
export function suppressionKey({ accountId, email, domain }: AutomaticSuppression): string {
  return JSON.stringify([accountId.toLowerCase(), email, domain]);
}

/**
 * The event ids to claim in the inbox: those of the events that ask for a suppression (the
 * others change nothing, so handling them twice is harmless), each once, sorted so that batches
 * that share events claim them in the same order.
 */
export function inboxClaims(decisions: readonly SuppressionDecision[]): string[] {
  const ids = decisions
    .filter((decision) => decision.suppressions.length > 0)
    .map((decision) => decision.eventId);
  return [...new Set(ids)].sort();
}

/**
 * The suppressions of the events this batch claimed (`claimed`: new to the inbox), at the first
 * occurrence of each event, each key once (the first event asking for it has it), sorted by key
 * so that concurrent batches insert in the same order.
 */
export function wantedSuppressions(
  decisions: readonly SuppressionDecision[],
  claimed: ReadonlySet<string>,
): WantedSuppression[] {
  const byKey = new Map<string, WantedSuppression>();
  const handled = new Set<string>();
  decisions.forEach((decision, itemIndex) => {
    if (!claimed.has(decision.eventId) || handled.has(decision.eventId)) return;
    handled.add(decision.eventId);
    for (const suppression of decision.suppressions) {
      const key = suppressionKey(suppression);
      if (!byKey.has(key)) byKey.set(key, { suppression, itemIndex });
    }
  });
  return [...byKey.entries()]
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(([, wanted]) => wanted);
}

/**
 * Each event's outcome, in order, as handling them one by one in that order gives: `ignored`
 * when it asks for nothing, `duplicate` when it was handled before (or earlier in the batch),
 * `suppressed` when it added a suppression (`createdBy`: the positions of the events whose
 * suppressions were inserted), else `already_suppressed`.
 */
export function batchOutcomes(
  decisions: readonly SuppressionDecision[],
  claimed: ReadonlySet<string>,
  createdBy: ReadonlySet<number>,
): AutomaticOutcome[] {
  const handled = new Set<string>();
  return decisions.map((decision, itemIndex) => {
    if (decision.suppressions.length === 0) return 'ignored';
    if (!claimed.has(decision.eventId) || handled.has(decision.eventId)) return 'duplicate';
    handled.add(decision.eventId);
    return createdBy.has(itemIndex) ? 'suppressed' : 'already_suppressed';
  });
}
