import { StreamBatchConsumer, type StreamItem } from '@envoi/shared-nats';
import { runInTraceContext } from '@envoi/shared-observability';
import { Injectable, Logger } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { FanOutService } from './fan-out.service';
import { decodeWebhookEvents, type WebhookEvent } from './webhook-event';
import { WEBHOOK_EVENT_DURABLES } from './webhook-event-sources';

/**
 * Every event type webhooks receive, one durable consumer each, shared by the replicas (a
 * stream message may carry several events: a send's receptions). The events of a pull are fanned out together (first attempts made, then stored in one
 * transaction); they are acknowledged once it commits. WEBHOOK_FAN_OUT_CONCURRENCY pulls per
 * consumer at once, so that one's calls overlap the next one's.
 */
@Injectable()
export class FanOutController {
  private readonly logger = new Logger(FanOutController.name);

  constructor(private readonly fanOut: FanOutService) {}

  @StreamBatchConsumer<WebhookEvent[], WebhooksConfig>({
    durables: WEBHOOK_EVENT_DURABLES,
    decode: decodeWebhookEvents,
    tuning: (config) => ({ concurrency: config.WEBHOOK_FAN_OUT_CONCURRENCY }),
  })
  async handle(items: ReadonlyArray<StreamItem<WebhookEvent[]>>): Promise<void> {
    for (const { event: events, delivery } of items) {
      for (const event of events) {
        if (event.missing.length === 0) continue;
        runInTraceContext(delivery.trace, () =>
          this.logger.warn(`${event.type} ${event.id} lacks ${event.missing.join(', ')}`),
        );
      }
    }
    await this.fanOut.fanOut(
      items.flatMap(({ event: events, delivery }) =>
        events.map((event) => ({ event, redelivered: delivery.deliveryCount > 1 })),
      ),
    );
  }
}
