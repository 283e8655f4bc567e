import type { Page, PageRequest } from '@envoi/contracts-core';
import { keysetPage } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';

import { WEBHOOKS_SCHEMA } from '../database/data-source-options';
import { WebhookAttemptEntity } from '../dispatch/webhook-attempt.entity';
import { type DeliveryState, WebhookDeliveryEntity } from '../dispatch/webhook-delivery.entity';

/** An attempt with the state its delivery is in now. */
export interface AttemptWithState {
  attempt: WebhookAttemptEntity;
  deliveryState: DeliveryState;
}

/**
 * Pending again and due now, whatever its state; a lease in progress is left to finish (its
 * attempt is recorded, and the delivery is claimed again once due).
 */
const RETRY_SQL = `
  UPDATE ${WEBHOOKS_SCHEMA}.webhook_deliveries
  SET state = 'pending', next_attempt_at = now(), updated_at = now()
  WHERE id = $1 AND webhook_id = $2 AND account_id = $3
  RETURNING id`;

/** Reads of the delivery history and manual retries (schema "webhooks"). */
@Injectable()
export class DeliveryHistoryRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The webhook's attempts, newest first, each with its delivery's state. */
  async pageAttempts(webhookId: string, page: PageRequest): Promise<Page<AttemptWithState>> {
    const query = this.dataSource.manager
      .createQueryBuilder(WebhookAttemptEntity, 'attempt')
      .where('attempt.webhookId = :webhookId', { webhookId });
    const result = await keysetPage(query, 'attempt', page);
    const states = await this.statesOf(result.data.map((attempt) => attempt.deliveryId));
    return {
      ...result,
      data: result.data.map((attempt) => ({
        attempt,
        deliveryState: states.get(attempt.deliveryId) ?? 'given_up',
      })),
    };
  }

  /** Makes the delivery due now; null when the webhook of that account has no such delivery. */
  async retry(
    accountId: string,
    webhookId: string,
    deliveryId: string,
  ): Promise<WebhookDeliveryEntity | null> {
    const result = await this.dataSource.query<unknown>(RETRY_SQL, [
      deliveryId,
      webhookId,
      accountId,
    ]);
    const affected = Array.isArray(result) && Array.isArray(result[0]) ? result[0].length : 0;
    if (affected === 0) return null;
    return this.dataSource.manager.findOneBy(WebhookDeliveryEntity, { id: deliveryId });
  }

  async findDeliveries(ids: readonly string[]): Promise<WebhookDeliveryEntity[]> {
    if (ids.length === 0) return [];
    return this.dataSource.manager.findBy(WebhookDeliveryEntity, { id: In([...ids]) });
  }

  private async statesOf(deliveryIds: readonly string[]): Promise<Map<string, DeliveryState>> {
    const deliveries = await this.dataSource.manager.find(WebhookDeliveryEntity, {
      select: { id: true, state: true },
      where: { id: In([...new Set(deliveryIds)]) },
    });
    return new Map(deliveries.map((delivery) => [delivery.id, delivery.state]));
  }
}
