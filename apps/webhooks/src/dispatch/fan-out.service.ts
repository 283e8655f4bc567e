import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import { endpointsFor, NO_SUBSCRIPTIONS, type SubscriptionSet } from '../webhooks/subscription-set';
import { WebhookSubscriptions } from '../webhooks/webhook-subscriptions.service';
import { DeliveriesRepository } from './deliveries.repository';
import type { DirectDelivery } from './direct-attempt';
import { DirectFanOut } from './direct-fan-out';
import { webhookBody, type WebhookEvent } from './webhook-event';
import { type TargetedEvent, WebhookEventWriter } from './webhook-event-writer';

/** An event of a pull, and whether the stream delivered it before (a crash, a failed batch). */
export interface FanOutItem {
  event: WebhookEvent;
  redelivered: boolean;
}

/**
 * Turns events into deliveries (and stream events), once per (event, subscribed webhook). Who is
 * subscribed comes from the accounts' cached subscription sets: an event nobody subscribed to
 * costs no statement. A first attempt goes straight to its endpoint (DirectFanOut) and is stored
 * with its result; an event delivered before, or for an endpoint whose calls fail or run late,
 * is stored first (WebhookEventWriter: the unique (event, webhook) pair makes a redelivered event
 * add nothing) and sent from there. The stream listeners' copies are found in the database, for
 * the accounts that have any.
 */
@Injectable()
export class FanOutService {
  constructor(
    private readonly subscriptions: WebhookSubscriptions,
    private readonly deliveries: DeliveriesRepository,
    private readonly writer: WebhookEventWriter,
    private readonly direct: DirectFanOut,
  ) {}

  async fanOut(items: readonly FanOutItem[]): Promise<void> {
    if (items.length === 0) return;
    const unique = [...new Map(items.map((item) => [item.event.id, item])).values()];
    const sets = await this.subscriptionSets(unique.map(({ event }) => event.accountId));
    const direct: DirectDelivery[] = [];
    const stored: TargetedEvent[] = [];
    for (const { event, redelivered } of unique) {
      const set = sets.get(event.accountId) ?? NO_SUBSCRIPTIONS;
      for (const endpoint of endpointsFor(set, event)) {
        const target = { webhookId: endpoint.webhookId, endpoint: true, streamed: false };
        if (redelivered || !this.direct.takes(endpoint)) {
          stored.push({ event, target });
          continue;
        }
        direct.push({
          id: randomUUID(),
          accountId: event.accountId,
          webhookId: endpoint.webhookId,
          eventId: event.id,
          eventType: event.type,
          body: webhookBody(event, endpoint.webhookId),
          url: endpoint.url,
          secretCiphertext: endpoint.secretCiphertext,
        });
      }
    }
    const streamed = await this.streamTargets(
      unique.map(({ event }) => event).filter((event) => sets.get(event.accountId)?.streamed),
    );
    // Nobody subscribed: nothing to write, the pull is acknowledged as it is.
    if (direct.length === 0 && stored.length === 0 && streamed.length === 0) return;
    await Promise.all([this.writer.write([...stored, ...streamed]), this.direct.send(direct)]);
  }

  private async subscriptionSets(
    accountIds: readonly string[],
  ): Promise<Map<string, SubscriptionSet>> {
    const distinct = [...new Set(accountIds)];
    const sets = await Promise.all(distinct.map((accountId) => this.subscriptions.of(accountId)));
    return new Map(
      distinct.map((accountId, index) => [accountId, sets[index] ?? NO_SUBSCRIPTIONS]),
    );
  }

  /** The events' copies for stream listeners, in the events' order (which a listener sees). */
  private async streamTargets(events: readonly WebhookEvent[]): Promise<TargetedEvent[]> {
    if (events.length === 0) return [];
    const subscribers = await this.deliveries.findSubscribers(events);
    return subscribers
      .filter((subscriber) => subscriber.streamed)
      .sort((a, b) => a.index - b.index)
      .flatMap(({ index, webhookId }): TargetedEvent[] => {
        const event = events[index];
        return event ? [{ event, target: { webhookId, endpoint: false, streamed: true } }] : [];
      });
  }
}
