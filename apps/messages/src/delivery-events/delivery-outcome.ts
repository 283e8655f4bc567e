import { validatePayload } from '@envoi/contracts-core';
import type { DeliveryOutcomeEvent } from '@envoi/contracts-delivery';
import { MESSAGE_STATUSES, type MessageStatus } from '@envoi/contracts-messages';
import { UnprocessableMessageError } from '@envoi/shared-nats';
import { Type } from 'class-transformer';
import {
  IsDefined,
  IsIn,
  IsOptional,
  IsRFC3339,
  IsString,
  IsUUID,
  ValidateNested,
} from 'class-validator';

import type { ReportedOutcome } from './status-machine';

/** The statuses each delivery event may report (a failed event also reports expiries). */
export const EVENT_STATUSES: {
  readonly [Type in DeliveryOutcomeEvent['type']]: readonly MessageStatus[];
} = {
  'message.delivered': ['Delivered', 'Sandbox Delivered'],
  'message.transient_error': ['Deferred', 'Sandbox Deferred'],
  'message.failed': ['Failed', 'Expired', 'Sandbox Failed'],
  'message.bounced': ['Bounced', 'Sandbox Bounced'],
  'message.suppressed': ['Suppressed', 'Sandbox Suppressed'],
};

const EVENT_TYPES: ReadonlySet<string> = new Set(Object.keys(EVENT_STATUSES));

/** Event ids are the publisher's `Nats-Msg-Id`s (the processed-events key). */
export const EVENT_ID_MAX_LENGTH = 255;

/** Longest remote host and reply kept in a log line. */
const REMOTE_HOST_MAX = 255;
const REPLY_MAX = 2_000;

/** The part of DeliveryAttemptData this service reads. */
class DeliveryAttemptFields {
  @IsRFC3339() time!: string;
  @IsString() remote_host!: string;
  @IsString() reply!: string;
  @IsIn(MESSAGE_STATUSES) status!: MessageStatus;
}

/** The part of DeliveryOutcomeData this service reads, checked before anything is applied. */
class DeliveryOutcomeFields {
  @IsUUID() id!: string;
  @IsUUID() account_id!: string;
  @IsIn(MESSAGE_STATUSES) status!: MessageStatus;
  @IsDefined()
  @ValidateNested()
  @Type(() => DeliveryAttemptFields)
  attempt!: DeliveryAttemptFields;
  @IsOptional() @IsIn(['hard', 'soft']) bounce_classification?: 'hard' | 'soft';
}

/** One delivery event, ready to apply. */
export interface DeliveryOutcome {
  eventId: string;
  type: DeliveryOutcomeEvent['type'];
  messageId: string;
  accountId: string;
  reported: ReportedOutcome;
}

function clip(text: string, max: number): string {
  const line = text.replace(/[\r\n]+/g, ' ');
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/**
 * A delivery event of the EVENTS stream, validated; an event no retry can help (not an object,
 * unknown type, missing or malformed fields, a status its type never reports) is unprocessable.
 */
export function toDeliveryOutcome(event: unknown): DeliveryOutcome {
  const envelope = (typeof event === 'object' && event !== null ? event : {}) as {
    id?: unknown;
    type?: unknown;
    data?: unknown;
  };
  const id = envelope.id;
  if (typeof id !== 'string' || id === '' || id.length > EVENT_ID_MAX_LENGTH) {
    throw new UnprocessableMessageError(`event id ${String(id)} is not a valid event id`);
  }
  const type = envelope.type;
  if (typeof type !== 'string' || !EVENT_TYPES.has(type)) {
    throw new UnprocessableMessageError(`event ${id} is not a delivery event: ${String(type)}`);
  }
  const eventType = type as DeliveryOutcomeEvent['type'];
  const data = validatePayload(DeliveryOutcomeFields, envelope.data);
  if (!data.ok) throw new UnprocessableMessageError(`event ${id}: ${data.message}`);
  const fields = data.value;
  const time = new Date(fields.attempt.time);
  if (Number.isNaN(time.getTime())) {
    throw new UnprocessableMessageError(`event ${id}: attempt.time is not a time`);
  }
  if (!EVENT_STATUSES[eventType].includes(fields.status)) {
    throw new UnprocessableMessageError(`event ${id}: ${eventType} cannot report ${fields.status}`);
  }
  const reported: ReportedOutcome = {
    status: fields.status,
    attempt: {
      time,
      remoteHost: clip(fields.attempt.remote_host.trim(), REMOTE_HOST_MAX),
      reply: clip(fields.attempt.reply, REPLY_MAX),
      status: fields.attempt.status,
    },
    bounceClassification: fields.bounce_classification ?? null,
  };
  return {
    eventId: id,
    type: eventType,
    messageId: fields.id,
    accountId: fields.account_id,
    reported,
  };
}
