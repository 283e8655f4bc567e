import { OUTCOME_BATCH_TYPE } from '@envoi/contracts-delivery';
import type { MessageReceptionBatchEvent } from '@envoi/contracts-messages';
import type { WebhookEventFlag, WebhookEventType } from '@envoi/contracts-webhooks';
import { decodeCarriedEvents, UnprocessableMessageError } from '@envoi/shared-nats';
import { Logger } from '@nestjs/common';

import {
  flagOf,
  isWebhookEventType,
  missingFields,
  WEBHOOK_EVENT_SOURCES,
  webhookData,
} from './webhook-event-sources';

/** An event of the EVENTS stream as the fan-out needs it. */
export interface WebhookEvent {
  id: string;
  type: WebhookEventType;
  flag: WebhookEventFlag;
  accountId: string;
  /** Whose scoped webhooks receive it; null: only the account's global ones. */
  domain: string | null;
  /** RFC 3339 with nanoseconds. */
  timestamp: string;
  /** The payload's `data`. */
  data: Record<string, unknown>;
  /** Fields webhooks.yaml lists that the stream event lacks or leaves null. */
  missing: string[];
}

/** The stream events that carry several events in `data.events`. */
const RECEPTION_BATCH_TYPE: MessageReceptionBatchEvent['type'] = 'message.reception_batch';
const BATCH_TYPES = [RECEPTION_BATCH_TYPE, OUTCOME_BATCH_TYPE];
const logger = new Logger('WebhookEvents');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The events a stream message carries: the events of a batch (`message.reception_batch`, the
 * receptions of sends committed together; `message.outcome_batch`, the delivery outcomes recorded
 * together), each as if it came alone on its type's subject, or the message's own event. Throws
 * for a message no retry can help; a batch's event no retry can help is logged and left out, so
 * it holds back none of the others.
 */
export function decodeWebhookEvents(payload: unknown): WebhookEvent[] {
  const decoded = decodeCarriedEvents(payload, BATCH_TYPES, decodeWebhookEvent);
  for (const reason of decoded.unprocessable) {
    // Only a batch leaves events out (a lone event no retry can help throws): payload is a record.
    const batch = isRecord(payload) ? `${String(payload['type'])} ${String(payload['id'])}` : '';
    logger.error(`${batch}: an event left out: ${reason}`);
  }
  return decoded.events;
}

/** Turns a stream event's envelope into a WebhookEvent; throws for one no retry can help. */
export function decodeWebhookEvent(payload: unknown): WebhookEvent {
  if (!isRecord(payload)) throw new UnprocessableMessageError('the event is not an object');
  const { id, type, timestamp, data } = payload;
  if (typeof id !== 'string' || id === '' || id.length > 255) {
    throw new UnprocessableMessageError('the event has no usable id');
  }
  if (!isWebhookEventType(type)) {
    throw new UnprocessableMessageError(`not an event type webhooks receive: ${String(type)}`);
  }
  if (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp))) {
    throw new UnprocessableMessageError('the event has no RFC 3339 timestamp');
  }
  if (!isRecord(data) || typeof data['account_id'] !== 'string' || !UUID.test(data['account_id'])) {
    throw new UnprocessableMessageError('the event has no account_id');
  }
  return {
    id,
    type,
    flag: flagOf(type),
    accountId: data['account_id'],
    domain: WEBHOOK_EVENT_SOURCES[type].domainOf(data),
    timestamp: withNanoseconds(timestamp),
    data: webhookData(type, data),
    missing: missingFields(type, data),
  };
}

/**
 * The timestamp in UTC with nine fractional digits: the stream's own digits kept (padded with
 * zeros), or the instant Date.parse reads when it carries an offset other than Z.
 */
export function withNanoseconds(timestamp: string): string {
  const utc = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/i.exec(timestamp);
  if (utc) return `${utc[1]}.${(utc[2] ?? '').padEnd(9, '0')}Z`;
  return withNanoseconds(new Date(timestamp).toISOString());
}

/** Each event's `data` as JSON, written once for all the webhooks it goes to. */
const dataJsonOf = new WeakMap<WebhookEvent, string>();

/**
 * The body every attempt sends to one webhook: `{type, webhook_id, timestamp, data}`, exactly
 * what JSON.stringify writes for that object, with the event's `data` serialised once.
 */
export function webhookBody(event: WebhookEvent, webhookId: string): string {
  let data = dataJsonOf.get(event);
  if (data === undefined) {
    data = JSON.stringify(event.data);
    dataJsonOf.set(event, data);
  }
  const type = JSON.stringify(event.type);
  const timestamp = JSON.stringify(event.timestamp);
  return `{"type":${type},"webhook_id":${JSON.stringify(webhookId)},"timestamp":${timestamp},"data":${data}}`;
}
