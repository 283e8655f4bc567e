import { randomUUID } from 'node:crypto';

import { ListenerStreams, type NewStreamEvent } from '@envoi/shared-listener-streams';
import { Injectable } from '@nestjs/common';

import { DeliveriesRepository, type NewDelivery } from './deliveries.repository';
import { DeliveryWorker } from './delivery-worker.service';
import { webhookBody, type WebhookEvent } from './webhook-event';

/** A webhook an event goes to, and how: its URL, its stream listener, or both. */
export interface EventTarget {
  webhookId: string;
  /** It has a URL (a temporary stream webhook has none). */
  endpoint: boolean;
  streamed: boolean;
}

export interface TargetedEvent {
  event: WebhookEvent;
  target: EventTarget;
}

/** The deliveries to endpoints and the stream events the targeted events make, with one body each. */
export function routeEvents(items: readonly TargetedEvent[]): {
  deliveries: NewDelivery[];
  streamed: NewStreamEvent[];
} {
  const deliveries: NewDelivery[] = [];
  const streamed: NewStreamEvent[] = [];
  for (const { event, target } of items) {
    const body = webhookBody(event, target.webhookId);
    const common = { eventId: event.id, eventType: event.type, body };
    if (target.endpoint) {
      deliveries.push({
        id: randomUUID(),
        accountId: event.accountId,
        webhookId: target.webhookId,
        ...common,
      });
    }
    if (target.streamed) streamed.push({ targetId: target.webhookId, ...common });
  }
  return { deliveries, streamed };
}

/**
 * Writes events to their webhooks: a delivery for each one with a URL (a pair already there is
 * left alone), a buffered stream event for each streamed one. The deliveries are written first,
 * those this replica has room for leased to its worker at once; the caller acknowledges its input
 * only after both, so a crash in between writes them again.
 */
@Injectable()
export class WebhookEventWriter {
  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly worker: DeliveryWorker,
    private readonly stream: ListenerStreams,
  ) {}

  /** Answers the deliveries it wrote (or found written before). */
  async write(items: readonly TargetedEvent[]): Promise<NewDelivery[]> {
    const routed = routeEvents(items);
    await this.worker.sendLeasedBy(routed.deliveries.length, (lease) =>
      this.deliveries.insert(routed.deliveries, lease),
    );
    await this.stream.append(routed.streamed);
    return routed.deliveries;
  }
}
