import { type Validated, validatePayload } from '@envoi/contracts-core';
import { MESSAGE_STATUSES, type MessageStatus } from '@envoi/contracts-messages';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsRFC3339,
  IsString,
  IsUUID,
  Min,
  ValidateNested,
} from 'class-validator';

import {
  type BounceClassification,
  type DeliveryAttemptData,
  type DeliveryOutcomeData,
  type DeliveryOutcomeEvent,
  FAILURE_REASONS,
  type FailureReason,
  RECIPIENT_RESULTS,
  type RecipientOutcomeData,
  type RecipientResult,
} from './events';
import { fastOutcomePayload, OUTCOME_EVENT_NAMES, type OutcomePayload } from './outcome-fast-check';

/** Event ids are the publisher's `Nats-Msg-Id`s (consumers key their processed events on them). */
export const EVENT_ID_MAX_LENGTH = 255;

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

/** The recipient result each event type stands for (a single-recipient message's only one). */
const EVENT_RESULTS: { readonly [Type in DeliveryOutcomeEvent['type']]: RecipientResult } = {
  'message.delivered': 'delivered',
  'message.transient_error': 'transient_error',
  'message.failed': 'failed',
  'message.bounced': 'bounced',
  'message.suppressed': 'suppressed',
};

class DeliveryAttemptPayload implements DeliveryAttemptData {
  @IsRFC3339() time!: string;
  @IsString() remote_host!: string;
  @IsString() reply!: string;
  @IsIn(MESSAGE_STATUSES) status!: MessageStatus;
  @IsInt() @Min(1) attempt!: number;
}

class RecipientOutcomePayload implements RecipientOutcomeData {
  @IsString() email!: string;
  @IsIn(RECIPIENT_RESULTS) result!: RecipientResult;
  @IsString() remote_host!: string;
  @IsString() reply!: string;
  @IsOptional() @IsIn(['hard', 'soft']) bounce_classification?: BounceClassification;
}

/** DeliveryOutcomeData as it arrives; `recipients` is absent in events published before it. */
class DeliveryOutcomePayload implements Omit<DeliveryOutcomeData, 'recipients' | 'is_bot'> {
  @IsUUID() id!: string;
  @IsUUID() account_id!: string;
  @IsIn(OUTCOME_EVENT_NAMES) event!: DeliveryOutcomeData['event'];
  @IsString() from!: string;
  @IsString() recipient!: string;
  @IsString() subject!: string;
  @IsString() message_id_header!: string;
  /** Absent in events published before it (always false for delivery events). */
  @IsOptional() @IsBoolean() is_bot?: boolean;
  @IsIn(MESSAGE_STATUSES) status!: MessageStatus;
  @IsDefined()
  @ValidateNested()
  @Type(() => DeliveryAttemptPayload)
  attempt!: DeliveryAttemptPayload;
  @IsOptional() @IsIn(['hard', 'soft']) bounce_classification?: BounceClassification;
  @IsBoolean() sandbox!: boolean;
  @IsOptional()
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => RecipientOutcomePayload)
  recipients?: RecipientOutcomePayload[];
  @IsOptional() @IsIn(FAILURE_REASONS) failure_reason?: FailureReason;
}

export type DecodedDeliveryEvent =
  { ok: true; event: DeliveryOutcomeEvent } | { ok: false; message: string };

/**
 * A delivery event of the EVENTS stream, checked field by field. Not ok (a message no retry can
 * help): not an object, an unknown type, missing or malformed fields, a status its type never
 * reports. An event published before per-recipient outcomes existed gets them from its
 * message-level fields, as it meant them then: one recipient, the event's result.
 */
export function decodeDeliveryOutcomeEvent(raw: unknown): DecodedDeliveryEvent {
  const envelope = (typeof raw === 'object' && raw !== null ? raw : {}) as {
    id?: unknown;
    type?: unknown;
    timestamp?: unknown;
    data?: unknown;
  };
  const id = envelope.id;
  if (typeof id !== 'string' || id === '' || id.length > EVENT_ID_MAX_LENGTH) {
    return { ok: false, message: `event id ${String(id)} is not a valid event id` };
  }
  const type = envelope.type;
  if (typeof type !== 'string' || !Object.hasOwn(EVENT_STATUSES, type)) {
    return { ok: false, message: `event ${id} is not a delivery event: ${String(type)}` };
  }
  const eventType = type as DeliveryOutcomeEvent['type'];
  const checked = checkedPayload(envelope.data);
  if (!checked.ok) return { ok: false, message: `event ${id}: ${checked.message}` };
  const payload = checked.value;
  if (Number.isNaN(new Date(payload.attempt.time).getTime())) {
    return { ok: false, message: `event ${id}: attempt.time is not a time` };
  }
  if (!EVENT_STATUSES[eventType].includes(payload.status)) {
    return { ok: false, message: `event ${id}: ${eventType} cannot report ${payload.status}` };
  }
  const data: DeliveryOutcomeData = {
    ...payload,
    is_bot: payload.is_bot ?? false,
    recipients: payload.recipients ?? [legacyRecipient(eventType, payload)],
  };
  const failureReason = payload.failure_reason ?? legacyFailureReason(data);
  if (failureReason) data.failure_reason = failureReason;
  else delete data.failure_reason;
  return {
    ok: true,
    event: {
      id,
      type: eventType,
      timestamp: typeof envelope.timestamp === 'string' ? envelope.timestamp : payload.attempt.time,
      data,
    },
  };
}

/** A delivery event's `data` validated against the contract class (unknown fields stripped). */
export function validateOutcomePayload(data: unknown): Validated<OutcomePayload> {
  return validatePayload(DeliveryOutcomePayload, data);
}

/** The event's data checked by hand (fastOutcomePayload), else against the contract class. */
function checkedPayload(data: unknown): Validated<OutcomePayload> {
  const fast = fastOutcomePayload(data);
  return fast ? { ok: true, value: fast } : validateOutcomePayload(data);
}

function legacyRecipient(
  type: DeliveryOutcomeEvent['type'],
  payload: OutcomePayload,
): RecipientOutcomeData {
  return {
    email: payload.recipient,
    result: EVENT_RESULTS[type],
    remote_host: payload.attempt.remote_host,
    reply: payload.attempt.reply,
    ...(payload.bounce_classification
      ? { bounce_classification: payload.bounce_classification }
      : {}),
  };
}

/** Before failure reasons: an expiry said so by its status, a first attempt's failure was the sender's. */
function legacyFailureReason(data: DeliveryOutcomeData): FailureReason | null {
  if (!data.recipients.some((recipient) => recipient.result === 'failed')) return null;
  if (data.status === 'Expired') return 'expired';
  return data.attempt.attempt < 2 ? 'not_sendable' : 'retries_exhausted';
}
