import type { StreamEvent } from '@envoi/contracts-core';
import { streamSubject } from '@envoi/contracts-core';
import type { MessageReceptionData, MessageStatus } from '@envoi/contracts-messages';

/** Hard: the address does not exist or refuses for good; soft: a temporary or policy reason. */
export type BounceClassification = 'hard' | 'soft';

/** One delivery attempt as the delivery service logged it (shown in `delivery_attempts`). */
export interface DeliveryAttemptData {
  /** RFC 3339, when the attempt ended. */
  time: string;
  /** The MX host tried (empty for sandbox and for failures before any connection). */
  remote_host: string;
  /** The SMTP reply (code, enhanced code, text) or the connection error, one line. */
  reply: string;
  /** The status the attempt leads to: Delivered, Deferred, Bounced, Failed, Sandbox …. */
  status: MessageStatus;
  /** 1 for the first attempt. */
  attempt: number;
}

/** What an attempt did for one recipient; the names of the five delivery events. */
export const RECIPIENT_RESULTS = [
  'delivered',
  'transient_error',
  'failed',
  'bounced',
  'suppressed',
] as const;
export type RecipientResult = (typeof RECIPIENT_RESULTS)[number];

/**
 * Why recipients failed for good: their retries ran out (the recipient's server kept deferring),
 * the message expired (the sender's `schedule.expires`), or the message could not be sent at all
 * (its content was purged, its sending domain is gone: the sender's side).
 */
export const FAILURE_REASONS = ['retries_exhausted', 'expired', 'not_sendable'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** One envelope recipient's outcome in an attempt. */
export interface RecipientOutcomeData {
  email: string;
  result: RecipientResult;
  /** The MX host that answered for this recipient (empty when none did). */
  remote_host: string;
  /** The reply to this recipient (its RCPT refusal, or the transaction's reply), one line. */
  reply: string;
  /** Only for bounces. */
  bounce_classification?: BounceClassification;
}

/**
 * `data` of the message delivery events: the public webhook payload (webhooks.yaml
 * MessageWebhookData, with `event`) plus what the messages service needs to move the message's
 * status. `status` is the status the message moves to; consumers never move a message backwards.
 *
 * A conversation message goes to several envelope recipients, and one attempt can deliver to
 * some, defer others and bounce the rest: the event (and `status`) is the message's, `recipient`
 * is the message's recipient as its record shows it, and `recipients` says what happened to each
 * recipient this attempt dealt with (those settled by earlier attempts are left out). Whoever
 * acts on an address (suppressions, webhooks) reads `recipients`, never `recipient`.
 */
export interface DeliveryOutcomeData extends Omit<MessageReceptionData, 'event'> {
  event: 'on_delivered' | 'on_transient_error' | 'on_failed' | 'on_bounced' | 'on_suppressed';
  status: MessageStatus;
  attempt: DeliveryAttemptData;
  /** Only for bounces: the message-level classification (its first bounced recipient's). */
  bounce_classification?: BounceClassification;
  /** Sandbox messages take simulated outcomes (platform notes 3.1). */
  sandbox: boolean;
  recipients: RecipientOutcomeData[];
  /** Set when some recipient's result is `failed`. */
  failure_reason?: FailureReason;
}

export type MessageDeliveredEvent = StreamEvent<'message.delivered', DeliveryOutcomeData>;
export type MessageTransientErrorEvent = StreamEvent<
  'message.transient_error',
  DeliveryOutcomeData
>;
export type MessageFailedEvent = StreamEvent<'message.failed', DeliveryOutcomeData>;
export type MessageBouncedEvent = StreamEvent<'message.bounced', DeliveryOutcomeData>;
export type MessageSuppressedEvent = StreamEvent<'message.suppressed', DeliveryOutcomeData>;

export type DeliveryOutcomeEvent =
  | MessageDeliveredEvent
  | MessageTransientErrorEvent
  | MessageFailedEvent
  | MessageBouncedEvent
  | MessageSuppressedEvent;

/** `data` of `message.outcome_batch`: the outcome events of attempts recorded together. */
export interface DeliveryOutcomeBatchData {
  /**
   * Each as it would be published alone on its type's subject, its own id included (a webhook's
   * `webhook-id`); of any types, messages and accounts.
   */
  events: DeliveryOutcomeEvent[];
}
export type DeliveryOutcomeBatchEvent = StreamEvent<
  'message.outcome_batch',
  DeliveryOutcomeBatchData
>;

/** The most events one `message.outcome_batch` stream message carries. */
export const OUTCOME_BATCH_MAX_EVENTS = 100;
/**
 * The most bytes one `message.outcome_batch` is estimated to take (its events' strings counted
 * at their worst-case JSON escape), far below the stream's 1 MB messages.
 */
export const OUTCOME_BATCH_MAX_BYTES = 256 * 1024;

/**
 * Durable outcome events on the EVENTS stream, published through the delivery service's outbox
 * (Nats-Msg-Id = event id). The messages service moves statuses from them, the suppressions
 * service suppresses on hard bounces and failures, the webhooks service fans them out.
 */
export const DeliveryStreamSubjects = {
  delivered: streamSubject<MessageDeliveredEvent>('events.message.delivered.v1'),
  transientError: streamSubject<MessageTransientErrorEvent>('events.message.transient_error.v1'),
  failed: streamSubject<MessageFailedEvent>('events.message.failed.v1'),
  bounced: streamSubject<MessageBouncedEvent>('events.message.bounced.v1'),
  suppressed: streamSubject<MessageSuppressedEvent>('events.message.suppressed.v1'),
  /**
   * The outcome events of the attempts one statement recorded, up to OUTCOME_BATCH_MAX_EVENTS
   * per stream message: how the delivery service announces them (the relay and the stream carry
   * one message, not one per attempt). Consumers read each event as if it came on its type's
   * subject, which stays consumed (events published one by one, before batches or by takeovers).
   */
  outcomeBatch: streamSubject<DeliveryOutcomeBatchEvent>('events.message.outcome_batch.v1'),
} as const;
