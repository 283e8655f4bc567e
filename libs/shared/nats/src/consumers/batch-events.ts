import { runInTraceContext } from '@envoi/shared-observability';
import type { Logger } from '@nestjs/common';

import { type StreamItem, UnprocessableMessageError } from '../jetstream-consumer';

/** The events of one stream message a batch decoder could read, and why it left out the others. */
export interface DecodedEvents<E> {
  events: E[];
  /** Why each event no retry can help was left out, in order. */
  unprocessable: string[];
}

/**
 * Decodes each event one stream message carries (a batch of events of unrelated messages, or a
 * lone event), so that an event no retry can help holds back none of the others: it is left
 * out, with why. The message is unprocessable as a whole only when none of its events decodes
 * (a lone event's own error then).
 */
export function decodeEachEvent<E>(
  events: readonly unknown[],
  decode: (event: unknown) => E,
): DecodedEvents<E> {
  const decoded: DecodedEvents<E> = { events: [], unprocessable: [] };
  for (const event of events) {
    try {
      decoded.events.push(decode(event));
    } catch (error) {
      if (!(error instanceof UnprocessableMessageError)) throw error;
      decoded.unprocessable.push(error.message);
    }
  }
  if (decoded.events.length === 0) {
    throw new UnprocessableMessageError(decoded.unprocessable.join('; '));
  }
  return decoded;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Decodes the events one stream message carries: a batch's (a message whose `type` is one of
 * `batchTypes`, its events in `data.events`, in order), each as decodeEachEvent does, or the
 * message's own event. A batch without events is unprocessable.
 */
export function decodeCarriedEvents<E>(
  payload: unknown,
  batchTypes: readonly string[],
  decode: (event: unknown) => E,
): DecodedEvents<E> {
  const type = isRecord(payload) ? payload['type'] : undefined;
  if (!isRecord(payload) || typeof type !== 'string' || !batchTypes.includes(type)) {
    return decodeEachEvent([payload], decode);
  }
  const data = payload['data'];
  const events = isRecord(data) ? data['events'] : undefined;
  if (!Array.isArray(events) || events.length === 0) {
    throw new UnprocessableMessageError(`the ${type} has no events`);
  }
  return decodeEachEvent(events, decode);
}

/** Logs, in each message's trace context, every event its batch decoder left out, and why. */
export function logLeftOutEvents(
  items: ReadonlyArray<StreamItem<DecodedEvents<unknown>>>,
  logger: Pick<Logger, 'error'>,
): void {
  for (const { event, delivery } of items) {
    for (const reason of event.unprocessable) {
      runInTraceContext(delivery.trace, () =>
        logger.error(
          `${delivery.subject} #${delivery.streamSequence}: an event left out: ${reason}`,
        ),
      );
    }
  }
}
