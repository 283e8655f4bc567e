import { CodedError } from '@envoi/contracts-core';
import { type OpenedWebhookStreamRecord, WebhooksErrorCode } from '@envoi/contracts-webhooks';
import { type ListenerStreamAccess, ListenerStreamStore } from '@envoi/shared-listener-streams';
import { Injectable } from '@nestjs/common';

import { assertTargetGranted } from '../webhooks/webhook-rules';
import { WebhookSubscriptions } from '../webhooks/webhook-subscriptions.service';
import { WebhooksException } from '../webhooks/webhooks.exception';
import { WebhooksRepository } from '../webhooks/webhooks.repository';
import { WebhooksService } from '../webhooks/webhooks.service';

/**
 * Webhook streams (platform notes 1.12): opening one (a temporary webhook, or an existing one
 * whose events are then also buffered) and who may listen; the listener stream itself is the
 * shared ListenerStreams on webhooks.webhook_stream_events.
 */
@Injectable()
export class WebhookStreamService implements ListenerStreamAccess {
  readonly errors = {
    notFound: () => WebhooksException.notFound(),
    listenerAttached: () =>
      new CodedError(
        WebhooksErrorCode.StreamListenerAttached,
        'another listener is attached to this webhook; use force_reconnect=true to replace it',
      ),
    notAttached: () =>
      new CodedError(
        WebhooksErrorCode.StreamNotAttached,
        'this listener is no longer attached to the webhook',
      ),
  };

  constructor(
    private readonly webhooksService: WebhooksService,
    private readonly webhooks: WebhooksRepository,
    private readonly store: ListenerStreamStore,
    private readonly subscriptions: WebhookSubscriptions,
  ) {}

  /** `granted` as in WebhooksService.update: an existing webhook needs the rights to update it. */
  async open(
    accountId: string,
    webhookId: string | undefined,
    granted: readonly string[] | undefined,
  ): Promise<OpenedWebhookStreamRecord> {
    if (webhookId === undefined) {
      const created = await this.webhooksService.createTemporary(accountId, granted);
      return { webhook_id: created.webhook.id };
    }
    await this.requireGranted(accountId, webhookId, granted);
    await this.store.markStreamed(webhookId);
    this.subscriptions.changed([accountId]);
    return { webhook_id: webhookId };
  }

  /** The webhook, visible to the key and within its domains (404, 403 otherwise). */
  async requireGranted(
    accountId: string,
    webhookId: string,
    granted: readonly string[] | undefined,
  ): Promise<void> {
    const found = await this.webhooks.find(accountId, webhookId, granted);
    if (!found) throw WebhooksException.notFound();
    assertTargetGranted({ scope: found.webhook.scope, domains: found.domains }, granted);
  }
}
