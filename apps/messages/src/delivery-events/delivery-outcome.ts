import { printable } from '@envoi/contracts-core';
import {
  decodeDeliveryOutcomeEvent,
  type DeliveryOutcomeEvent,
  OUTCOME_BATCH_TYPE,
} from '@envoi/contracts-delivery';
import {
  decodeCarriedEvents,
  type DecodedEvents,
  UnprocessableMessageError,
} from '@envoi/shared-nats';

import type { ReportedOutcome } from './status-machine';

/** Longest remote host and reply kept in a log line. */
const REMOTE_HOST_MAX = 255;
const REPLY_MAX = 2_000;

/** One delivery event, ready to apply. */
export interface DeliveryOutcome {
  eventId: string;
  type: DeliveryOutcomeEvent['type'];
  messageId: string;
  accountId: string;
  reported: ReportedOutcome;
}

/** One printable line (PostgreSQL text takes no NUL), at most `max` characters. */
function clip(text: string, max: number): string {
  const line = printable(text);
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/**
 * A delivery event of the EVENTS stream, validated (decodeDeliveryOutcomeEvent); an event no
 * retry can help is unprocessable.
 */
export function toDeliveryOutcome(event: unknown): DeliveryOutcome {
  const decoded = decodeDeliveryOutcomeEvent(event);
  if (!decoded.ok) throw new UnprocessableMessageError(decoded.message);
  const { id, type, data } = decoded.event;
  const reported: ReportedOutcome = {
    status: data.status,
    attempt: {
      time: new Date(data.attempt.time),
      remoteHost: clip(data.attempt.remote_host.trim(), REMOTE_HOST_MAX),
      reply: clip(data.attempt.reply, REPLY_MAX),
      status: data.attempt.status,
    },
    bounceClassification: data.bounce_classification ?? null,
  };
  return { eventId: id, type, messageId: data.id, accountId: data.account_id, reported };
}

/**
 * The delivery events of one stream message (a `message.outcome_batch`'s, in order, or the
 * message's own), each validated. A batch's events are of unrelated messages: one no retry can
 * help is left out (with why), the others are applied.
 */
export function toDeliveryOutcomes(message: unknown): DecodedEvents<DeliveryOutcome> {
  return decodeCarriedEvents(message, [OUTCOME_BATCH_TYPE], toDeliveryOutcome);
}
