import type { SandboxResult } from './requests';

/**
 * Message statuses: the reference platform's names (platform notes 2.4), plus the three it leaves
 * unnamed: a scheduled message waiting for its first attempt, a cancelled one, and one dropped
 * because `schedule.expires` passed.
 */
export const MESSAGE_STATUSES = [
  'Received',
  'Scheduled',
  'Delivered',
  'Deferred',
  'Bounced',
  'Failed',
  'Suppressed',
  'Cancelled',
  'Expired',
  'Sandbox Delivered',
  'Sandbox Deferred',
  'Sandbox Failed',
  'Sandbox Bounced',
  'Sandbox Suppressed',
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/**
 * Statuses after which a message is never attempted again (and a data retention of 0 purges its
 * content): every status but Received, Scheduled and Deferred. Only an asynchronous bounce still
 * changes a Delivered message (to Bounced); nothing leaves the others.
 */
export const FINAL_MESSAGE_STATUSES: readonly MessageStatus[] = [
  'Delivered',
  'Bounced',
  'Failed',
  'Suppressed',
  'Cancelled',
  'Expired',
  'Sandbox Delivered',
  'Sandbox Deferred',
  'Sandbox Failed',
  'Sandbox Bounced',
  'Sandbox Suppressed',
];

const FINAL: ReadonlySet<string> = new Set(FINAL_MESSAGE_STATUSES);

export function isFinalMessageStatus(status: MessageStatus): boolean {
  return FINAL.has(status);
}

/** The final status of a sandbox message for each `sandbox_result` (platform notes 3.1). */
export const SANDBOX_STATUS: { readonly [Result in SandboxResult]: MessageStatus } = {
  deliver: 'Sandbox Delivered',
  bounce: 'Sandbox Bounced',
  defer: 'Sandbox Deferred',
  fail: 'Sandbox Failed',
  suppress: 'Sandbox Suppressed',
};

/** One recipient's outcome in the create-message response (spec 2.2). */
export interface CreatedMessageRecord {
  object: 'message';
  /** `<uuid@domain>`; null when not sent. */
  id: string | null;
  recipient: { email: string; name: string; substitutions?: Record<string, unknown> };
  status: 'queued' | 'scheduled' | 'error';
  error: string | null;
  /** Only when the request carried a schedule. */
  schedule?: { first_attempt?: string; expires?: string };
}

export interface CreateMessageResult {
  object: 'list';
  data: CreatedMessageRecord[];
}

/** One delivery attempt of a message (contract DeliveryEvent). */
export interface DeliveryAttemptRecord {
  time: string;
  log: string;
  status: string;
}

/** The contract's MessageSummary. */
export interface MessageSummaryRecord {
  object: 'message';
  id: string;
  /** The Message-ID header, `<uuid@domain>`. */
  message_id: string;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
  delivered_at: string | null;
  retain_until: string;
  direction: 'inbound' | 'outbound';
  is_bounce_notification: boolean;
  bounce_classification: string;
  delivery_attempts: DeliveryAttemptRecord[];
  subject: string;
  tags: string[];
  sender: string;
  recipient: string;
  status: MessageStatus;
  num_attempts: number;
  click_count: number;
  open_count: number;
  reference_message_id: number | null;
  domain_id: string;
  account_id: string;
}

export interface ParsedContentRecord {
  parts: { content_type: string; content: string }[];
  attachments: { filename: string; content: string; content_type: string; content_id?: string }[];
  headers: Record<string, string[]>;
}

/** An object of a JetStream object store bucket, with the size and SHA-256 (hex) it must have. */
export interface StoredObjectRecord {
  bucket: string;
  name: string;
  size: number;
  sha256: string;
}

/** getMessage: the summary plus the raw RFC 822 content and its parsed form (null once purged). */
export interface MessageRecord extends MessageSummaryRecord {
  content: string | null;
  content_parsed: ParsedContentRecord | null;
  /**
   * Internal, never public: set instead of `content` and `content_parsed` (then null) when they
   * are too large for a NATS reply. The object in MESSAGE_DOWNLOADS_BUCKET holds the JSON
   * `{content, content_parsed}`; the reader takes it (takeUpload: verified, then deleted) and
   * puts both fields back in place of this one.
   */
  content_download?: StoredObjectRecord;
}

/** `data` of the `message.reception` webhook (reference webhooks.yaml MessageWebhookData). */
export interface MessageReceptionData {
  account_id: string;
  event: 'on_reception';
  from: string;
  recipient: string;
  subject: string;
  /** The Message-ID header, `<uuid@domain>`. */
  message_id_header: string;
  /** The message's id (uuid). */
  id: string;
  /** Whether a bot did it: sent on every message event, `false` for all but opens and clicks. */
  is_bot: boolean;
}

/**
 * `data` of `message.send_receptions` (internal, never a webhook): the messages one send stored,
 * each also announced by its own `message.reception`. Versions before usage was counted from
 * reception batches published it; usage still counts the rows they left.
 */
export interface MessageSendReceptionsData {
  account_id: string;
  /** Every message the send stored (uuids), in the order of its recipients. */
  message_ids: string[];
}

/**
 * `data` of `message.suppressed` published at accept, for a recipient that is on a suppression
 * list: nothing is stored nor attempted for it and the send answers `error` for it, so `id` and
 * `message_id_header` name no stored message (they are generated for the event, as a message
 * would have had them); `subject` is the send's, unrendered.
 */
export interface MessageSuppressedAtAcceptData extends Omit<MessageReceptionData, 'event'> {
  event: 'on_suppressed';
}

/**
 * A job of the delivery work queue (stream DELIVERY, subject `delivery.jobs.v1`): a reference, never
 * content. Its `Nats-Msg-Id` is the outbox row id; workers must be idempotent per message.
 */
export interface DeliveryJob {
  /** The message's id (uuid); the worker reads the message and its content from the service. */
  message_id: string;
  account_id: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/**
 * The first attempt of a chunk of one send's messages (at most DELIVERY_JOB_MAX_MESSAGES), all
 * due at the same time. A send of one message gets a {@link DeliveryJob}; retries are always
 * one DeliveryJob per message.
 */
export interface DeliveryBatchJob {
  message_ids: string[];
  account_id: string;
  attempt: 1;
}

/** What the DELIVERY work queue carries. */
export type AnyDeliveryJob = DeliveryJob | DeliveryBatchJob;

/** The messages a job is for, in order. */
export function deliveryJobMessageIds(job: AnyDeliveryJob): string[] {
  return 'message_ids' in job ? job.message_ids : [job.message_id];
}
