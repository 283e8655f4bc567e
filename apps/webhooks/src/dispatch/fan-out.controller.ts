import { StreamBatchConsumer, type StreamItem } from '@envoi/shared-nats';
import { runInTraceContext } from '@envoi/shared-observability';
import { Injectable, Logger } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { FanOutService } from './fan-out.service';
import { decodeWebhookEvent, type WebhookEvent } from './webhook-event';
import { WEBHOOK_EVENT_DURABLES } from './webhook-event-sources';

/**
 * Every event type webhooks receive, one durable consumer each, shared by the replicas. The
 * events of a pull are fanned out together (first attempts made, then stored in one
 * transaction); they are acknowledged once it commits. WEBHOOK_FAN_OUT_CONCURRENCY pulls per
 * consumer at once, so that one's calls overlap the next one's.
 */
@Injectable()
export class FanOutController {
  private readonly logger = new Logger(FanOutController.name);

  constructor(private readonly fanOut: FanOutService) {}

  @StreamBatchConsumer<WebhookEvent, WebhooksConfig>({
    durables: WEBHOOK_EVENT_DURABLES,
    decode: decodeWebhookEvent,
    tuning: (config) => ({ concurrency: config.WEBHOOK_FAN_OUT_CONCURRENCY }),
  })
  async handle(items: ReadonlyArray<StreamItem<WebhookEvent>>): Promise<void> {
    for (const { event, delivery } of items) {
      if (event.missing.length === 0) continue;
      runInTraceContext(delivery.trace, () =>
        this.logger.warn(`${event.type} ${event.id} lacks ${event.missing.join(', ')}`),
      );
    }
    await this.fanOut.fanOut(
      items.map(({ event, delivery }) => ({ event, redelivered: delivery.deliveryCount > 1 })),
    );
  }
}
