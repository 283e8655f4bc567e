import type { MessageResponse, Page } from '@envoi/contracts-core';
import { eventSubject, requestSubject } from '@envoi/contracts-core';

import type { CreatedWebhookRecord, WebhookRecord } from './records';
import type {
  CreateWebhookRequest,
  ListWebhooksRequest,
  UpdateWebhookRequest,
  WebhookRef,
} from './requests';

/** Request/reply subjects of the webhooks service (`<domain>.<entity>.<verb>.v<N>`). */
export const WebhooksSubjects = {
  list: requestSubject<ListWebhooksRequest, Page<WebhookRecord>>('webhooks.webhook.list.v1'),
  create: requestSubject<CreateWebhookRequest, CreatedWebhookRecord>('webhooks.webhook.create.v1'),
  get: requestSubject<WebhookRef, WebhookRecord>('webhooks.webhook.get.v1'),
  update: requestSubject<UpdateWebhookRequest, WebhookRecord>('webhooks.webhook.update.v1'),
  delete: requestSubject<WebhookRef, MessageResponse>('webhooks.webhook.delete.v1'),
} as const;

/** A change of an account's webhooks: which events go where (see WebhookChangeSubjects). */
export interface WebhooksChangedEvent {
  account_id: string;
}

/**
 * Broadcast to every webhooks replica (no queue group) once a change of an account's webhooks
 * committed: drop its cached subscriptions (at most once; the caches also expire).
 */
export const WebhookChangeSubjects = {
  changed: eventSubject<WebhooksChangedEvent>('webhooks.webhook.changed.v1'),
} as const;
