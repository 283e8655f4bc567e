import { Module } from '@nestjs/common';

import { DeliveriesRepository } from './deliveries.repository';
import { DeliveryWorker } from './delivery-worker.service';
import { FanOutController } from './fan-out.controller';
import { FanOutService } from './fan-out.service';
import { RetentionPurgeService } from './retention-purge.service';
import { WebhookSecrets } from './webhook-secrets';
import { NodeWebhookTransport, WebhookTransport } from './webhook-transport';

/** The delivery engine: events fanned out into deliveries, and the calls that send them. */
@Module({
  providers: [
    DeliveriesRepository,
    FanOutService,
    FanOutController,
    DeliveryWorker,
    RetentionPurgeService,
    WebhookSecrets,
    { provide: WebhookTransport, useClass: NodeWebhookTransport },
  ],
})
export class DispatchModule {}
