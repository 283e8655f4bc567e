import { randomUUID } from 'node:crypto';

import { EVENTS_STREAM } from '@envoi/contracts-core';
import {
  type BounceClassification,
  type DeliveryOutcomeBatchEvent,
  type DeliveryOutcomeEvent,
  DeliveryStreamSubjects,
} from '@envoi/contracts-delivery';
import type { MessageStatus } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';

import { DELIVERY_EVENT_DURABLES } from '../src/delivery-events/delivery-events.controller';
import type { MessagesTestApp } from './messages-test-app';

/** The message a delivery event is about. */
export interface EventTarget {
  id: string;
  header: string;
  accountId: string;
  from: string;
  recipient: string;
}

export interface OutcomeOptions {
  status: MessageStatus;
  /** Attempt time; default now. */
  time?: Date;
  remoteHost?: string;
  reply?: string;
  attempt?: number;
  bounce?: BounceClassification;
  sandbox?: boolean;
  /** Event id; default a fresh uuid. */
  id?: string;
}

const EVENT_OF_TYPE = {
  'message.delivered': 'on_delivered',
  'message.transient_error': 'on_transient_error',
  'message.failed': 'on_failed',
  'message.bounced': 'on_bounced',
  'message.suppressed': 'on_suppressed',
} as const;

const RESULT_OF_TYPE = {
  'message.delivered': 'delivered',
  'message.transient_error': 'transient_error',
  'message.failed': 'failed',
  'message.bounced': 'bounced',
  'message.suppressed': 'suppressed',
} as const;

const SUBJECT_OF_TYPE = {
  'message.delivered': DeliveryStreamSubjects.delivered,
  'message.transient_error': DeliveryStreamSubjects.transientError,
  'message.failed': DeliveryStreamSubjects.failed,
  'message.bounced': DeliveryStreamSubjects.bounced,
  'message.suppressed': DeliveryStreamSubjects.suppressed,
  'message.outcome_batch': DeliveryStreamSubjects.outcomeBatch,
} as const;

/** A delivery event as the delivery service publishes it (DeliveryOutcomeData). */
export function outcomeEvent(
  target: EventTarget,
  type: DeliveryOutcomeEvent['type'],
  options: OutcomeOptions,
): DeliveryOutcomeEvent {
  const time = (options.time ?? new Date()).toISOString();
  return {
    id: options.id ?? randomUUID(),
    type,
    timestamp: time,
    data: {
      account_id: target.accountId,
      event: EVENT_OF_TYPE[type],
      from: target.from,
      recipient: target.recipient,
      subject: 'Hello',
      message_id_header: target.header,
      id: target.id,
      is_bot: false,
      status: options.status,
      attempt: {
        time,
        remote_host: options.remoteHost ?? 'mx.recipient.test',
        reply: options.reply ?? `reply: ${options.status}`,
        status: options.status,
        attempt: options.attempt ?? 1,
      },
      ...(options.bounce ? { bounce_classification: options.bounce } : {}),
      sandbox: options.sandbox ?? false,
      recipients: [
        {
          email: target.recipient,
          result: RESULT_OF_TYPE[type],
          remote_host: options.remoteHost ?? 'mx.recipient.test',
          reply: options.reply ?? `reply: ${options.status}`,
          ...(options.bounce ? { bounce_classification: options.bounce } : {}),
        },
      ],
    },
  };
}

/**
 * Publishes an event onto the EVENTS stream as the delivery service's outbox relay does
 * (`Nats-Msg-Id` = event id unless told otherwise); returns its stream sequence.
 */
export async function publishOutcome(
  app: MessagesTestApp,
  event:
    | DeliveryOutcomeEvent
    | DeliveryOutcomeBatchEvent
    | { id: string; type: DeliveryOutcomeEvent['type'] },
  msgId: string = event.id,
): Promise<number> {
  const subject = SUBJECT_OF_TYPE[event.type];
  const ack = await app.connection
    .jetstream()
    .publish(subject.name, Buffer.from(JSON.stringify(event)), { msgID: msgId });
  return ack.seq;
}

/** The events in one `message.outcome_batch`, as the delivery service batches them. */
export function outcomeBatch(events: DeliveryOutcomeEvent[]): DeliveryOutcomeBatchEvent {
  return {
    id: randomUUID(),
    type: 'message.outcome_batch',
    timestamp: new Date().toISOString(),
    data: { events },
  };
}

/**
 * Waits until the status machine's consumer of the subject has acknowledged everything up to
 * stream sequence `seq` (handled, dropped as a duplicate, or terminated as unprocessable).
 */
export async function handledUpTo(
  app: MessagesTestApp,
  type: keyof typeof SUBJECT_OF_TYPE,
  seq: number,
): Promise<void> {
  const subject = SUBJECT_OF_TYPE[type];
  const durable = DELIVERY_EVENT_DURABLES.find(([, candidate]) => candidate === subject)?.[0];
  if (!durable) throw new Error(`no durable consumer for ${type}`);
  const jsm = await app.connection.jetstreamManager();
  await pollUntil(
    () => jsm.consumers.info(EVENTS_STREAM, durable),
    (info) => info.ack_floor.stream_seq >= seq && info.num_ack_pending === 0,
    { what: `${durable} to acknowledge #${seq}` },
  );
}
