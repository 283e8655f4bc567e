import {
  type CreatedWebhookRecord,
  WEBHOOK_EVENT_FLAGS,
  type WebhookEventFlags,
  type WebhookRecord,
} from '@envoi/contracts-webhooks';

import type { WebhookEntity } from './webhook.entity';
import { FLAG_PROPERTIES } from './webhook-flags';

function flagsOf(webhook: WebhookEntity): WebhookEventFlags {
  const flags = {} as WebhookEventFlags;
  for (const flag of WEBHOOK_EVENT_FLAGS) flags[flag] = webhook[FLAG_PROPERTIES[flag]];
  return flags;
}

/** The public record: never the keyset position, the sealed secret nor why it was disabled. */
export function toWebhookRecord(webhook: WebhookEntity, domains: readonly string[]): WebhookRecord {
  return {
    object: 'webhook',
    id: webhook.id,
    created_at: webhook.createdAt.toISOString(),
    updated_at: webhook.updatedAt.toISOString(),
    name: webhook.name,
    url: webhook.url,
    enabled: webhook.enabled,
    ...flagsOf(webhook),
    scope: webhook.scope,
    domains: webhook.scope === 'global' ? [] : [...domains],
    success_count: Number(webhook.successCount),
    error_count: Number(webhook.errorCount),
    errors_since_last_success: webhook.errorsSinceLastSuccess,
    last_request_at: webhook.lastRequestAt?.toISOString() ?? null,
  };
}

/** The creation's record: the only one with the secret. */
export function toCreatedWebhookRecord(
  webhook: WebhookEntity,
  domains: readonly string[],
  secret: string,
): CreatedWebhookRecord {
  return { ...toWebhookRecord(webhook, domains), secret };
}
