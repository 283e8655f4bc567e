import type { MessageResponse, Page, StreamEvent } from '@envoi/contracts-core';
import { deliveryJobSubject, requestSubject, streamSubject } from '@envoi/contracts-core';

import type {
  DeliveryView,
  DeliveryViewRequest,
  DeliveryViews,
  DeliveryViewsRequest,
  DeliveryViewsV2,
} from './delivery-view';
import type {
  AnyDeliveryJob,
  CreateMessageResult,
  MessageReceptionData,
  MessageRecord,
  MessageSendReceptionsData,
  MessageSummaryRecord,
  MessageSuppressedAtAcceptData,
} from './records';
import type {
  CreateConversationRequest,
  CreateMessageRequest,
  ListMessagesRequest,
  MessageRef,
} from './requests';
import type {
  AcceptSubmissionRequest,
  AcceptSubmissionResult,
  AcceptSubmissionsRequest,
  AcceptSubmissionsResult,
} from './submissions';
import type {
  MessageClickedEvent,
  MessageOpenedEvent,
  TrackedClickResult,
  TrackedOpenResult,
  TrackingHitRequest,
} from './tracking';

export const MessagesSubjects = {
  /** Accepts a send: one message per recipient, committed with its delivery job (spec 2.1/2.2). */
  createMessage: requestSubject<CreateMessageRequest, CreateMessageResult>(
    'messages.message.create.v1',
  ),
  /** Accepts one message to to/cc/bcc together. */
  createConversation: requestSubject<CreateConversationRequest, CreateMessageResult>(
    'messages.conversation.create.v1',
  ),
  /** Accepts one SMTP DATA transaction from the submission server: one message per recipient. */
  acceptSubmission: requestSubject<AcceptSubmissionRequest, AcceptSubmissionResult>(
    'messages.submission.accept.v1',
  ),
  /**
   * Accepts the DATA transactions an smtp replica has waiting, in one request: each as
   * acceptSubmission would, answered together once every one is committed or refused.
   */
  acceptSubmissions: requestSubject<AcceptSubmissionsRequest, AcceptSubmissionsResult>(
    'messages.submission.accept-batch.v1',
  ),
  listMessages: requestSubject<ListMessagesRequest, Page<MessageSummaryRecord>>(
    'messages.message.list.v1',
  ),
  getMessage: requestSubject<MessageRef, MessageRecord>('messages.message.get.v1'),
  /** Cancels a scheduled message; it never goes out afterwards. */
  cancelMessage: requestSubject<MessageRef, MessageResponse>('messages.message.cancel.v1'),
  /** Internal (delivery workers): a message's envelope, state and raw bytes. */
  deliveryView: requestSubject<DeliveryViewRequest, DeliveryView>(
    'messages.message.delivery-view.v1',
  ),
  /** Internal (delivery workers): the views of a job's messages, in one reply. */
  deliveryViews: requestSubject<DeliveryViewsRequest, DeliveryViews>(
    'messages.message.delivery-views.v1',
  ),
  /** Internal (delivery workers): the views of a job's messages and their sends' sources. */
  deliveryViewsV2: requestSubject<DeliveryViewsRequest, DeliveryViewsV2>(
    'messages.message.delivery-views.v2',
  ),
  /** Public tracking (gateway): a pixel loaded; `messages.tracking_not_found` for a bad token. */
  trackOpen: requestSubject<TrackingHitRequest, TrackedOpenResult>('messages.tracking.open.v1'),
  /** Public tracking (gateway): a tracked link followed; where to redirect. */
  trackClick: requestSubject<TrackingHitRequest, TrackedClickResult>('messages.tracking.click.v1'),
} as const;

/** The JetStream object store bucket large request bodies travel through (gateway → messages). */
export const MESSAGE_UPLOADS_BUCKET = 'message-uploads';

/** The bucket large getMessage contents travel through (messages → gateway); see MessageRecord. */
export const MESSAGE_DOWNLOADS_BUCKET = 'message-downloads';

export type MessageReceptionEvent = StreamEvent<'message.reception', MessageReceptionData>;
/**
 * `data` of `message.reception_batch`: the `message.reception` events of one account's sends
 * committed together (one send, or the SMTP submissions of a group commit), or of a part.
 */
export interface MessageReceptionBatchData {
  /** The account of every event. */
  account_id: string;
  /** Each as it would be published alone, its own id included (a webhook's `webhook-id`). */
  events: MessageReceptionEvent[];
}
export type MessageReceptionBatchEvent = StreamEvent<
  'message.reception_batch',
  MessageReceptionBatchData
>;
/** `timestamp` is when the send was accepted, as in each of its `message.reception` events. */
export type MessageSendReceptionsEvent = StreamEvent<
  'message.send_receptions',
  MessageSendReceptionsData
>;
export type MessageSuppressedAtAcceptEvent = StreamEvent<
  'message.suppressed',
  MessageSuppressedAtAcceptData
>;

/** Durable events and jobs (JetStream), published through the messages service's outbox. */
export const MessagesStreamSubjects = {
  /** A message was accepted and queued (or scheduled): always its first event. */
  reception: streamSubject<MessageReceptionEvent>('events.message.reception.v1'),
  /**
   * The `reception` events of the sends one commit stored, up to RECEPTION_BATCH_MAX_EVENTS per
   * stream message: how accepted mail announces them (the relay and the stream carry one message,
   * not one per recipient); consumers read each event as if it came on `reception`, and usage is
   * counted from them.
   */
  receptionBatch: streamSubject<MessageReceptionBatchEvent>('events.message.reception_batch.v1'),
  /**
   * The messages one send stored, in one event published with their `reception` events (never
   * to webhooks) by versions before usage was counted from reception batches; no longer
   * published, still read for the rows those versions left in the stream.
   */
  sendReceptions: streamSubject<MessageSendReceptionsEvent>('events.message.send_receptions.v1'),
  /**
   * A send named a suppressed recipient (no message, no reception event for it). The delivery
   * service's `message.suppressed` (a stored message found suppressed later) has its own subject
   * and payload; both are the public `message.suppressed`.
   */
  suppressedAtAccept: streamSubject<MessageSuppressedAtAcceptEvent>(
    'events.message.suppressed_at_accept.v1',
  ),
  /** A tracked message's pixel was loaded (at most TRACKING_EVENTS_PER_MESSAGE per message). */
  opened: streamSubject<MessageOpenedEvent>('events.message.opened.v1'),
  /** A tracked link was followed (at most TRACKING_EVENTS_PER_MESSAGE per message). */
  clicked: streamSubject<MessageClickedEvent>('events.message.clicked.v1'),
  /**
   * Messages due for delivery: on the DELIVERY work queue, at their first attempt time (one job
   * per chunk of a send), then one job per message and retry.
   */
  deliveryJobs: deliveryJobSubject<AnyDeliveryJob>(),
} as const;
