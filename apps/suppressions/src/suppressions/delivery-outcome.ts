import { isHostname, normalizeDomainName, validatePayload } from '@envoi/contracts-core';
import type { MessageBouncedEvent, MessageFailedEvent } from '@envoi/contracts-delivery';
import { isSuppressibleEmail, normalizeEmail, REASON_MAX } from '@envoi/contracts-suppressions';
import { UnprocessableMessageError } from '@envoi/shared-nats';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Min,
  ValidateNested,
} from 'class-validator';

/** Event ids are the publisher's `Nats-Msg-Id`s (the processed-events key). */
export const EVENT_ID_MAX_LENGTH = 255;

/** The delivery events that can suppress an address. */
export type SuppressingEvent = MessageBouncedEvent | MessageFailedEvent;

const EVENT_TYPES: ReadonlySet<string> = new Set<SuppressingEvent['type']>([
  'message.bounced',
  'message.failed',
]);

/** The part of DeliveryAttemptData this service reads. */
class AttemptFields {
  @IsString() remote_host!: string;
  @IsString() reply!: string;
  /** 1 for the first attempt. */
  @IsInt() @Min(1) attempt!: number;
}

/** The part of DeliveryOutcomeData this service reads. */
class OutcomeFields {
  @IsUUID() account_id!: string;
  @IsString() recipient!: string;
  @IsString() from!: string;
  @IsString() status!: string;
  @IsBoolean() sandbox!: boolean;
  @IsOptional() @IsIn(['hard', 'soft']) bounce_classification?: 'hard' | 'soft';
  @IsDefined() @ValidateNested() @Type(() => AttemptFields) attempt!: AttemptFields;
}

/** The automatic suppression an event asks for. */
export interface AutomaticSuppression {
  accountId: string;
  /** Normalised. */
  email: string;
  /** The sending domain (normalised): automatic suppressions apply to it only. */
  domain: string;
  reason: string;
}

export interface SuppressionDecision {
  eventId: string;
  /** Null: the event suppresses nothing. */
  suppression: AutomaticSuppression | null;
}

function reasonText(prefix: string, attempt: AttemptFields): string {
  const reply = attempt.reply.replace(/[\r\n]+/g, ' ').trim();
  const where = attempt.remote_host.trim();
  const text = reply === '' ? prefix : `${prefix}${where === '' ? '' : ` (${where})`}: ${reply}`;
  return text.length <= REASON_MAX ? text : `${text.slice(0, REASON_MAX - 1)}…`;
}

/**
 * What a `message.bounced` or `message.failed` event of the EVENTS stream means for the
 * suppression list (issue 6, platform notes 2.7):
 * - a hard bounce (status Bounced, classification `hard`, including an asynchronous bounce after
 *   delivery) suppresses the recipient;
 * - a permanent failure after repeated attempts (status Failed reported by attempt 2 or later:
 *   the retries for temporary failures ran out, the "repeated soft failures" of the reference)
 *   suppresses the recipient. A failure reported by the first attempt is the sender's side (the
 *   content was purged, the sending domain is gone), never the recipient's: it does not;
 * - soft bounces, expiries (a failed event reporting Expired: the sender's deadline passed, not
 *   the recipient's fault) and every sandbox outcome suppress nothing. Whether sandbox bounces
 *   create real suppressions is undocumented (platform notes 3.1); they do not here, so that
 *   testing with `sandbox_result: bounce` never blocks a real address.
 *
 * The suppression applies to the sending domain only (the domain of `from`), not the whole
 * account: the reference's `suppression.created` names a `sending_domain`, and a refusal of one
 * domain's mail (reputation, policy) says nothing about the account's other domains. It lasts
 * the automatic lifetime (30 days by default).
 *
 * Throws UnprocessableMessageError for an event no retry can help (malformed).
 */
export function toSuppressionDecision(event: unknown): SuppressionDecision {
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
    throw new UnprocessableMessageError(`event ${id} is not a bounce or failure: ${String(type)}`);
  }
  const data = validatePayload(OutcomeFields, envelope.data);
  if (!data.ok) throw new UnprocessableMessageError(`event ${id}: ${data.message}`);
  const fields = data.value;
  const none = { eventId: id, suppression: null };
  if (fields.sandbox || fields.status.startsWith('Sandbox')) return none;
  let reason: string;
  if (type === 'message.bounced') {
    if (fields.status !== 'Bounced' || fields.bounce_classification !== 'hard') return none;
    reason = reasonText('Hard bounce', fields.attempt);
  } else {
    if (fields.status !== 'Failed' || fields.attempt.attempt < 2) return none;
    reason = reasonText('Repeated delivery failures', fields.attempt);
  }
  const email = normalizeEmail(fields.recipient);
  if (!isSuppressibleEmail(email)) {
    throw new UnprocessableMessageError(`event ${id}: recipient is not an email address`);
  }
  const domain = normalizeDomainName(fields.from.slice(fields.from.lastIndexOf('@') + 1));
  if (!isHostname(domain)) {
    throw new UnprocessableMessageError(`event ${id}: from has no valid domain`);
  }
  return {
    eventId: id,
    suppression: { accountId: fields.account_id, email, domain, reason },
  };
}
