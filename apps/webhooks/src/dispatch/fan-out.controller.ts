import { StreamBatchConsumer, type StreamItem } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { FanOutService } from './fan-out.service';
import { decodeWebhookEvent, type WebhookEvent } from './webhook-event';
import { WEBHOOK_EVENT_DURABLES } from './webhook-event-sources';

/**
 * Every event type webhooks receive, one durable consumer each, shared by the replicas. The
 * events of a pull are fanned out in one transaction; they are acknowledged once it commits.
 */
@Injectable()
export class FanOutController {
  constructor(private readonly fanOut: FanOutService) {}

  @StreamBatchConsumer({ durables: WEBHOOK_EVENT_DURABLES, decode: decodeWebhookEvent })
  async handle(items: ReadonlyArray<StreamItem<WebhookEvent>>): Promise<void> {
    await this.fanOut.fanOut(items.map(({ event }) => event));
  }
}
