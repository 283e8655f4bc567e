import { type StreamEvent, streamSubject, validatePayload } from '@envoi/contracts-core';
import { IsOptional, IsString, IsUUID, MaxLength, MinLength } from 'class-validator';

import { EVENT_ID_MAX_LENGTH } from './outcome-payload';

/**
 * `data` of a complaint: an ARF feedback report (RFC 5965) the delivery service matched to the
 * message it is about. Not a public webhook event; the suppressions service suppresses the
 * recipient for the sending domain (reason `complaint`).
 */
export interface MessageComplaintData {
  account_id: string;
  /** The message complained about. */
  id: string;
  /** The message's sender (its domain is the suppression's). */
  from: string;
  /** The address that complained. */
  recipient: string;
  /** The report's Feedback-Type (abuse, fraud, virus, other). */
  feedback_type: string;
  /** The reporter's User-Agent, when it gave one. */
  user_agent: string | null;
}

export type MessageComplaintEvent = StreamEvent<'message.complaint', MessageComplaintData>;

/** Published through the delivery service's outbox (Nats-Msg-Id = event id). */
export const ComplaintStreamSubjects = {
  complaint: streamSubject<MessageComplaintEvent>('events.message.complaint.v1'),
} as const;

class MessageComplaintPayload implements MessageComplaintData {
  @IsUUID() account_id!: string;
  @IsUUID() id!: string;
  @IsString() @MinLength(3) @MaxLength(320) from!: string;
  @IsString() @MinLength(3) @MaxLength(320) recipient!: string;
  @IsString() @MaxLength(64) feedback_type!: string;
  @IsOptional() @IsString() @MaxLength(255) user_agent!: string | null;
}

export type DecodedComplaintEvent =
  { ok: true; event: MessageComplaintEvent } | { ok: false; message: string };

/** A complaint event of the EVENTS stream, checked field by field (not ok: no retry helps). */
export function decodeComplaintEvent(raw: unknown): DecodedComplaintEvent {
  const envelope = (typeof raw === 'object' && raw !== null ? raw : {}) as {
    id?: unknown;
    type?: unknown;
    timestamp?: unknown;
    data?: unknown;
  };
  const { id, type, timestamp } = envelope;
  if (typeof id !== 'string' || id === '' || id.length > EVENT_ID_MAX_LENGTH) {
    return { ok: false, message: `event id ${String(id)} is not a valid event id` };
  }
  if (type !== 'message.complaint') {
    return { ok: false, message: `event ${id} is not a complaint: ${String(type)}` };
  }
  const checked = validatePayload(MessageComplaintPayload, envelope.data);
  if (!checked.ok) return { ok: false, message: `event ${id}: ${checked.message}` };
  const data: MessageComplaintData = {
    ...checked.value,
    user_agent: checked.value.user_agent ?? null,
  };
  return {
    ok: true,
    event: { id, type, timestamp: typeof timestamp === 'string' ? timestamp : '', data },
  };
}
