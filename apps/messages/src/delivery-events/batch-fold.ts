import type { DeliveryOutcome } from './delivery-outcome';
import { applyOutcome, type DeliveryState } from './status-machine';

/** What applying an event did. */
export type ApplyResult = 'applied' | 'duplicate' | 'unknown_message';

/** A message as a batch reads it (locked): whose it is, its retention and its delivery fields. */
export interface BatchMessage {
  id: string;
  accountId: string;
  retentionDataDays: number;
  state: DeliveryState;
}

/** uuids compare case-insensitively in PostgreSQL; PostgreSQL answers them in lowercase. */
function uuidKey(uuid: string): string {
  return uuid.toLowerCase();
}

/** The messages read for a batch, by id. */
export type BatchMessages = ReadonlyMap<string, BatchMessage>;

export function byId(messages: readonly BatchMessage[]): BatchMessages {
  return new Map(messages.map((message) => [uuidKey(message.id), message]));
}

/** The message an event is about, when it exists and belongs to the event's account. */
export function messageOf(
  messages: BatchMessages,
  outcome: DeliveryOutcome,
): BatchMessage | undefined {
  const message = messages.get(uuidKey(outcome.messageId));
  return message && uuidKey(message.accountId) === uuidKey(outcome.accountId) ? message : undefined;
}

/** An event to claim in processed_events, with the id of its message as stored. */
export interface EventClaim {
  eventId: string;
  messageId: string;
  type: string;
}

/**
 * The events of a batch that can be claimed: those of existing messages (of their account),
 * each event id once (a republication can put one event twice in a batch), in batch order.
 */
export function claimsOf(
  messages: BatchMessages,
  outcomes: readonly DeliveryOutcome[],
): EventClaim[] {
  const claims = new Map<string, EventClaim>();
  for (const outcome of outcomes) {
    const message = messageOf(messages, outcome);
    if (!message || claims.has(outcome.eventId)) continue;
    claims.set(outcome.eventId, {
      eventId: outcome.eventId,
      messageId: message.id,
      type: outcome.type,
    });
  }
  return [...claims.values()];
}

/** What a batch changes: each event's result and the new state of each message it moved. */
export interface FoldedBatch {
  /** One per event, in the batch's order. */
  results: ApplyResult[];
  /** Only messages with at least one event applied, by message. */
  changed: Map<string, { message: BatchMessage; state: DeliveryState }>;
}

/**
 * Applies a batch's new events to their messages, in batch order, through the status machine:
 * the same as applying them one by one in that order (applyOutcome). An event is applied when
 * its message exists and its id was claimed by this batch (`claimed`), and only at its first
 * occurrence in the batch; otherwise it is a duplicate (claimed before) or of an unknown message.
 */
export function foldBatch(
  messages: BatchMessages,
  outcomes: readonly DeliveryOutcome[],
  claimed: ReadonlySet<string>,
): FoldedBatch {
  const results: ApplyResult[] = [];
  const changed = new Map<string, { message: BatchMessage; state: DeliveryState }>();
  const applied = new Set<string>();
  for (const outcome of outcomes) {
    const message = messageOf(messages, outcome);
    if (!message) {
      results.push('unknown_message');
      continue;
    }
    if (!claimed.has(outcome.eventId) || applied.has(outcome.eventId)) {
      results.push('duplicate');
      continue;
    }
    applied.add(outcome.eventId);
    const before = changed.get(message.id)?.state ?? message.state;
    changed.set(message.id, { message, state: applyOutcome(before, outcome.reported) });
    results.push('applied');
  }
  return { results, changed };
}
