import type { DeliveryOutcomeBatchEvent } from './events';

const OUTCOME_BATCH_TYPE: DeliveryOutcomeBatchEvent['type'] = 'message.outcome_batch';

export type DeliveryEventsOfMessage =
  { ok: true; events: unknown[] } | { ok: false; message: string };

/**
 * The delivery events one stream message carries, each still to decode: the events of a
 * `message.outcome_batch`, in order, or the message's own event. Not ok for a batch without
 * events (a message no retry can help).
 */
export function deliveryEventsOfMessage(payload: unknown): DeliveryEventsOfMessage {
  if (typeof payload !== 'object' || payload === null || !('type' in payload)) {
    return { ok: true, events: [payload] };
  }
  if (payload.type !== OUTCOME_BATCH_TYPE) return { ok: true, events: [payload] };
  const data = 'data' in payload ? payload.data : undefined;
  const events = typeof data === 'object' && data !== null && 'events' in data ? data.events : [];
  if (!Array.isArray(events) || events.length === 0) {
    return { ok: false, message: 'the outcome batch has no events' };
  }
  return { ok: true, events };
}
