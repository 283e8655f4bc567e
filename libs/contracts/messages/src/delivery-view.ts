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
import type { SandboxResult } from './requests';

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
 * A message as the delivery worker sees it: envelope, state, limits and the exact bytes to send.
 * The raw RFC 5322 message is inline (`content_base64`) when its base64 form fits in
 * INLINE_PAYLOAD_MAX_BYTES, otherwise in MESSAGE_DOWNLOADS_BUCKET (`content_download`: the raw
 * bytes, taken with takeUpload; the object expires after the service's UPLOAD_TTL_MS). Neither
 * is set once data retention has purged the content (the message cannot be sent any more).
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
  content_base64?: string;
  content_download?: StoredObjectRecord;
}
