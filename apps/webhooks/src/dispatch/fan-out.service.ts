import { Injectable } from '@nestjs/common';

import { DeliveriesRepository } from './deliveries.repository';
import type { WebhookEvent } from './webhook-event';
import { type TargetedEvent, WebhookEventWriter } from './webhook-event-writer';

/**
 * Turns events into deliveries (and stream events), exactly once per (event, subscribed webhook):
 * one statement finds every event's subscribers, one writes their deliveries, where the unique
 * (event, webhook) pair makes a redelivered or duplicated event add nothing. An event nobody
 * subscribes to costs the first statement only: no inbox row is written for it.
 */
@Injectable()
export class FanOutService {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly writer: WebhookEventWriter,
  ) {}

  /** Answers how many deliveries it wrote (or found written before). */
  async fanOut(events: readonly WebhookEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const unique = [...new Map(events.map((event) => [event.id, event])).values()];
    const subscribers = await this.deliveries.findSubscribers(unique);
    // In the events' order, which a stream listener sees them in.
    subscribers.sort((a, b) => a.index - b.index);
    const targeted = subscribers.flatMap(({ index, ...target }): TargetedEvent[] => {
      const event = unique[index];
      return event ? [{ event, target }] : [];
    });
    return (await this.writer.write(targeted)).length;
  }
}
