import { CodedError, type Page, type PageRequest } from '@envoi/contracts-core';
import {
  type TriggeredWebhookEventsRecord,
  type WebhookAttemptRecord,
  type WebhookDeliveryRecord,
  type WebhookEventType,
  WebhooksErrorCode,
} from '@envoi/contracts-webhooks';
import { Injectable } from '@nestjs/common';

import { WebhookEventWriter } from '../dispatch/webhook-event-writer';
import { WebhooksException } from '../webhooks/webhooks.exception';
import { type StoredWebhook, WebhooksRepository } from '../webhooks/webhooks.repository';
import { DeliveryHistoryRepository } from './delivery-history.repository';
import { sampleEvent } from './sample-events';
import { toWebhookAttemptRecord, toWebhookDeliveryRecord } from './webhook-delivery.mapper';

const deliveryNotFound = (): CodedError =>
  new CodedError(WebhooksErrorCode.NotFound, 'webhook delivery not found');

/**
 * An endpoint's delivery history, manual retries and sample events. `granted` as in
 * WebhooksService: a domain-scoped key reaches only webhooks linked to one of its domains.
 */
@Injectable()
export class WebhookDeliveriesService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly history: DeliveryHistoryRepository,
    private readonly writer: WebhookEventWriter,
  ) {}

  async listAttempts(
    accountId: string,
    webhookId: string,
    granted: readonly string[] | undefined,
    page: PageRequest,
  ): Promise<Page<WebhookAttemptRecord>> {
    await this.requireWebhook(accountId, webhookId, granted);
    const result = await this.history.pageAttempts(webhookId, page);
    return {
      ...result,
      data: result.data.map((row) => toWebhookAttemptRecord(row.attempt, row.deliveryState)),
    };
  }

  /** Sends the delivery again now, delivered or given up as well; its attempts keep counting. */
  async retry(
    accountId: string,
    webhookId: string,
    deliveryId: string,
    granted: readonly string[] | undefined,
  ): Promise<WebhookDeliveryRecord> {
    await this.requireWebhook(accountId, webhookId, granted);
    const delivery = await this.history.retry(accountId, webhookId, deliveryId);
    if (!delivery) throw deliveryNotFound();
    return toWebhookDeliveryRecord(delivery);
  }

  /**
   * One delivery of a sample event per type, to this webhook only, whatever its flags (and to its
   * stream listener when streamed; a temporary webhook has no deliveries, only stream events).
   */
  async trigger(
    accountId: string,
    webhookId: string,
    types: readonly WebhookEventType[],
    granted: readonly string[] | undefined,
  ): Promise<TriggeredWebhookEventsRecord> {
    const { webhook } = await this.requireWebhook(accountId, webhookId, granted);
    const now = new Date();
    const target = { webhookId, endpoint: webhook.url !== '', streamed: webhook.streamed };
    const rows = await this.writer.write(
      types.map((type) => ({ event: sampleEvent(type, accountId, now), target })),
    );
    const stored = new Map(
      (await this.history.findDeliveries(rows.map((row) => row.id))).map((d) => [d.id, d]),
    );
    return {
      object: 'list',
      data: rows.flatMap((row) => {
        const delivery = stored.get(row.id);
        return delivery ? [toWebhookDeliveryRecord(delivery)] : [];
      }),
    };
  }

  private async requireWebhook(
    accountId: string,
    webhookId: string,
    granted: readonly string[] | undefined,
  ): Promise<StoredWebhook> {
    const found = await this.webhooks.find(accountId, webhookId, granted);
    if (!found) throw WebhooksException.notFound();
    return found;
  }
}
