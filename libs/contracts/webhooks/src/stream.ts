import { listenerStreamSubjects, requestSubject } from '@envoi/contracts-core';
import { IsOptional, IsUUID } from 'class-validator';

import { DomainRestriction } from './requests';

/**
 * The webhook stream of platform notes 1.12 (what `ahasend webhooks listen` uses): a webhook's
 * events on a listener stream (contracts-core listener-streams) whose target is the webhook.
 */

/** POST …/webhooks/stream: `webhook_id` absent creates a temporary webhook (global, every event). */
export class OpenWebhookStreamRequest {
  @IsUUID() account_id!: string;
  @IsOptional() @IsUUID() webhook_id?: string;
  @DomainRestriction() domains?: string[];
}

/** The answer to POST …/webhooks/stream, before the gateway adds `ws_url`. */
export interface OpenedWebhookStreamRecord {
  webhook_id: string;
}

export const WebhookStreamSubjects = {
  open: requestSubject<OpenWebhookStreamRequest, OpenedWebhookStreamRecord>(
    'webhooks.stream.open.v1',
  ),
  ...listenerStreamSubjects('webhooks'),
} as const;
