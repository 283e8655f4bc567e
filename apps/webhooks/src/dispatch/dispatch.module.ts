import { Module } from '@nestjs/common';

import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveriesRepository } from './deliveries.repository';
import { DeliveryWorker } from './delivery-worker.service';
import { FanOutController } from './fan-out.controller';
import { FanOutService } from './fan-out.service';
import { RetentionPurgeService } from './retention-purge.service';
import { GuardedWebhookTransport, WebhookTransport } from './webhook-transport';

/** The delivery engine: events fanned out into deliveries, and the calls that send them. */
@Module({
  imports: [WebhooksModule],
  providers: [
    DeliveriesRepository,
    FanOutService,
    FanOutController,
    DeliveryWorker,
    RetentionPurgeService,
    { provide: WebhookTransport, useClass: GuardedWebhookTransport },
  ],
  exports: [DeliveriesRepository],
})
export class DispatchModule {}
