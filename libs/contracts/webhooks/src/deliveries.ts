import { type Page, PageRequest, requestSubject } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsIn,
  IsUUID,
  ValidateNested,
} from 'class-validator';

import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './records';
import { WebhookRef } from './requests';

/** Beyond the reference contract: an endpoint's delivery history, manual retries, test events. */

export const WEBHOOK_DELIVERY_STATES = ['pending', 'delivered', 'given_up'] as const;
export type WebhookDeliveryState = (typeof WEBHOOK_DELIVERY_STATES)[number];

/** One event to send to one endpoint, signed with the same `webhook-id` on every attempt. */
export interface WebhookDeliveryRecord {
  object: 'webhook_delivery';
  id: string;
  webhook_id: string;
  /** The `webhook-id` header value. */
  event_id: string;
  event_type: string;
  state: WebhookDeliveryState;
  /** Attempts made so far. */
  attempts: number;
  /** When the next attempt is due; null once delivered or given up. */
  next_attempt_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One call made for a delivery (GET …/webhooks/{id}/deliveries lists these, newest first). */
export interface WebhookAttemptRecord {
  object: 'webhook_attempt';
  delivery_id: string;
  /** The `webhook-id` header value. */
  event_id: string;
  event_type: string;
  /** 1 for the first call of the delivery; a manual retry continues the count. */
  attempt: number;
  attempted_at: string;
  /** Null when no response came (timeout, refused connection, …). */
  response_status: number | null;
  duration_ms: number;
  /** The first 1 KB of the response body. */
  response_body: string;
  /** Why no response came, or why the call was not made; null when a response came. */
  error: string | null;
  /** When this attempt scheduled the next one; null when it settled the delivery. */
  next_retry_at: string | null;
  /** The delivery's state now. */
  delivery_state: WebhookDeliveryState;
}

/** The answer to POST …/webhooks/{id}/trigger: one sample delivery per listed event type. */
export interface TriggeredWebhookEventsRecord {
  object: 'list';
  data: WebhookDeliveryRecord[];
}

export const WEBHOOK_EVENT_TYPE_NAMES = Object.keys(WEBHOOK_EVENT_TYPES) as WebhookEventType[];

/** POST …/webhooks/{id}/trigger. */
export class TriggerWebhookBody {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_TYPE_NAMES.length)
  @IsIn(WEBHOOK_EVENT_TYPE_NAMES, { each: true })
  events!: WebhookEventType[];
}

export class ListWebhookAttemptsRequest extends WebhookRef {
  @ValidateNested() @Type(() => PageRequest) page: PageRequest = new PageRequest();
}

export class WebhookDeliveryRef extends WebhookRef {
  @IsUUID() delivery_id!: string;
}

export class TriggerWebhookRequest extends WebhookRef {
  @IsDefined() @ValidateNested() @Type(() => TriggerWebhookBody) body!: TriggerWebhookBody;
}

/** Request/reply subjects of the delivery history API. */
export const WebhookDeliveriesSubjects = {
  listAttempts: requestSubject<ListWebhookAttemptsRequest, Page<WebhookAttemptRecord>>(
    'webhooks.attempt.list.v1',
  ),
  retry: requestSubject<WebhookDeliveryRef, WebhookDeliveryRecord>('webhooks.delivery.retry.v1'),
  trigger: requestSubject<TriggerWebhookRequest, TriggeredWebhookEventsRecord>(
    'webhooks.webhook.trigger.v1',
  ),
} as const;
