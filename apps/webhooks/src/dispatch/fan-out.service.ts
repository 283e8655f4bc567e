import { randomUUID } from 'node:crypto';

import { Inbox } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { WEBHOOKS_SCHEMA } from '../database/data-source-options';
import { DeliveriesRepository, type NewDelivery } from './deliveries.repository';
import { webhookBody, type WebhookEvent } from './webhook-event';

/**
 * Turns events into deliveries, exactly once per (event, subscribed webhook): in one transaction
 * it claims the events in the inbox, finds every event's subscribers and writes their
 * deliveries (three statements for the whole batch). An event handled before adds nothing.
 */
@Injectable()
export class FanOutService {
  private readonly inbox = new Inbox(WEBHOOKS_SCHEMA);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly deliveries: DeliveriesRepository,
  ) {}

  /** Answers how many deliveries it wrote. */
  async fanOut(events: readonly WebhookEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    return this.dataSource.transaction(async (manager) => {
      const claimed = await this.inbox.claim(
        manager,
        events.map((event) => ({ eventId: event.id, type: event.type })),
      );
      const fresh = [...new Map(events.map((event) => [event.id, event])).values()].filter(
        (event) => claimed.has(event.id),
      );
      const subscribers = await this.deliveries.findSubscribers(fresh, manager);
      const rows = subscribers.flatMap(({ index, webhookId }): NewDelivery[] => {
        const event = fresh[index];
        if (!event) return [];
        return [
          {
            id: randomUUID(),
            webhookId,
            accountId: event.accountId,
            eventId: event.id,
            eventType: event.type,
            body: webhookBody(event, webhookId),
          },
        ];
      });
      await this.deliveries.insert(rows, manager);
      return rows.length;
    });
  }
}
