import {
  ArrayMaxSize,
  ArrayNotEmpty,
  Equals,
  IsArray,
  IsInt,
  IsString,
  IsUUID,
  Min,
} from 'class-validator';

import { DELIVERY_JOB_MAX_MESSAGES } from './limits';
import type { DeliveryBatchJob, DeliveryJob, MessageStatus, StoredObjectRecord } from './records';
import type { AttachmentBody, SandboxResult } from './requests';

/** A job of the DELIVERY work queue, as the workers validate it. */
export class DeliveryJobPayload implements DeliveryJob {
  @IsUUID() message_id!: string;
  @IsString() account_id!: string;
  @IsInt() @Min(1) attempt!: number;
}

/** A first-attempt job for a chunk of a send, as the workers validate it. */
export class DeliveryBatchJobPayload implements DeliveryBatchJob {
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(DELIVERY_JOB_MAX_MESSAGES)
  @IsUUID(undefined, { each: true })
  message_ids!: string[];
  @IsString() account_id!: string;
  @Equals(1) attempt!: 1;
}

/** The contract class a job is validated with: a batch job carries `message_ids`. */
export function deliveryJobContract(
  payload: unknown,
): new () => DeliveryJobPayload | DeliveryBatchJobPayload {
  return typeof payload === 'object' && payload !== null && 'message_ids' in payload
    ? DeliveryBatchJobPayload
    : DeliveryJobPayload;
}

/** The delivery service asks for what it needs to attempt one message. */
export class DeliveryViewRequest {
  @IsUUID() message_id!: string;
}

/** The delivery service asks for the views of a job's messages at once. */
export class DeliveryViewsRequest {
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(DELIVERY_JOB_MAX_MESSAGES)
  @IsUUID(undefined, { each: true })
  message_ids!: string[];
}

/**
 * The messages asked for that exist, in the order asked (a missing one is left out): `views`
 * with their content inline, in order, as long as the whole reply fits INLINE_PAYLOAD_MAX_BYTES;
 * from the first whose content does not fit on, only their ids (`separately`): the worker asks
 * for each of those with deliveryView when it is about to send it (large contents travel through
 * the downloads bucket there, one message at a time). A view without content was purged.
 */
export interface DeliveryViews {
  views: DeliveryView[];
  separately: string[];
}

/**
 * The views of a job's messages in one reply (deliveryViews v2), each send's sources once: a
 * view whose `composition` names a send is composed by the worker from that send's entry in
 * `sends` (one per send, however many of its messages the reply holds) and its own recipient
 * part; a message stored before sends were (its raw bytes stored) carries them as in v1, inline
 * in order while the reply fits INLINE_PAYLOAD_MAX_BYTES, then by id in `separately` (read each
 * with deliveryView). A view with neither composition nor content was purged.
 */
export interface DeliveryViewsV2 extends DeliveryViews {
  sends: DeliverySendRecord[];
}

/** An address as composition writes it. */
export interface ComposeAddressRecord {
  email: string;
  name?: string;
}

/** What every message of a send shares, as stored once at accept: all composition needs. */
export interface SendSourcesRecord {
  kind: 'message' | 'conversation';
  /** RFC 3339 with milliseconds: the Date header. */
  accepted_at: string;
  from: ComposeAddressRecord;
  reply_to?: ComposeAddressRecord;
  /** A conversation's To and Cc; a send's message is addressed to its own recipient. */
  to?: ComposeAddressRecord[];
  cc?: ComposeAddressRecord[];
  /** Templates when `templated`, otherwise the content as it is sent. */
  templates: { subject: string; text?: string; html?: string; amp?: string };
  headers: Record<string, string>;
  /** The global substitutions. */
  substitutions?: Record<string, unknown>;
  templated: boolean;
  attachments: AttachmentBody[];
}

/**
 * A send's sources in a DeliveryViewsV2 reply: inline, or, when they do not fit in the reply
 * (large attachments or content), their JSON in MESSAGE_DOWNLOADS_BUCKET (taken with takeUpload;
 * the object expires after the messages service's UPLOAD_TTL_MS).
 */
export interface DeliverySendRecord {
  id: string;
  sources?: SendSourcesRecord;
  sources_download?: StoredObjectRecord;
}

/** What one message adds to its send's sources (its id, Message-ID and tracking are the view's). */
export interface RecipientPartRecord {
  send_id: string;
  /** A send's recipient (its To); unused for a conversation. */
  recipient: ComposeAddressRecord;
  /** The recipient's own substitutions. */
  substitutions?: Record<string, unknown>;
}

/**
 * A message as the delivery worker sees it: envelope, state, limits and the exact bytes to send.
 * The raw RFC 5322 message is inline (`content_base64`) when its base64 form fits in
 * INLINE_PAYLOAD_MAX_BYTES, otherwise in MESSAGE_DOWNLOADS_BUCKET (`content_download`: the raw
 * bytes, taken with takeUpload; the object expires after the service's UPLOAD_TTL_MS). Neither
 * is set once data retention has purged the content (the message cannot be sent any more).
 * In a DeliveryViewsV2 reply, a message of a stored send carries `composition` instead.
 * `messages.message_not_found` when the message does not exist (or was deleted by retention).
 */
export interface DeliveryView {
  id: string;
  message_id_header: string;
  account_id: string;
  domain_id: string;
  /** The sender's domain: selects the DKIM key and the return-path host. */
  domain: string;
  sender: string;
  subject: string;
  /** One address for a send, every to/cc/bcc address for a conversation message. */
  envelope_recipients: string[];
  /** Terminal or cancelled messages are not attempted. */
  status: MessageStatus;
  sandbox: boolean;
  sandbox_result: SandboxResult | null;
  /** RFC 3339; not attempted before. */
  first_attempt_at: string | null;
  /** RFC 3339; dropped (status Expired) when not delivered by then. */
  expires_at: string | null;
  tracking: { open: boolean; click: boolean };
  /**
   * The content is a message submitted over SMTP, sent as it was submitted: the worker adds its
   * open and click tracking (`tracking`) to its HTML parts. Absent for composed or legacy content,
   * which carries its tracking already.
   */
  submitted?: boolean;
  content_base64?: string;
  content_download?: StoredObjectRecord;
  composition?: RecipientPartRecord;
}
