import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { DeliveriesRepository, type NewDelivery } from './deliveries.repository';
import { webhookBody, type WebhookEvent } from './webhook-event';

/**
 * Turns events into deliveries, exactly once per (event, subscribed webhook): one statement finds
 * every event's subscribers, one writes their deliveries, where the unique (event, webhook) pair
 * makes a redelivered or duplicated event add nothing. An event nobody subscribes to costs the
 * first statement only: no inbox row is written for it.
 */
@Injectable()
export class FanOutService {
  constructor(private readonly deliveries: DeliveriesRepository) {}

  /** Answers how many deliveries it wrote (or found written before). */
  async fanOut(events: readonly WebhookEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const unique = [...new Map(events.map((event) => [event.id, event])).values()];
    const subscribers = await this.deliveries.findSubscribers(unique);
    const rows = subscribers.flatMap(({ index, webhookId }): NewDelivery[] => {
      const event = unique[index];
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
    await this.deliveries.insert(rows);
    return rows.length;
  }
}
