import { Module } from '@nestjs/common';

import { StreamModule } from '../stream/stream.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { AttemptRecorder } from './attempt-recorder.service';
import { DeliveriesRepository } from './deliveries.repository';
import { DeliveryWorker } from './delivery-worker.service';
import { DirectFanOut } from './direct-fan-out';
import { FanOutController } from './fan-out.controller';
import { FanOutService } from './fan-out.service';
import { RetentionPurgeService } from './retention-purge.service';
import { WebhookEventWriter } from './webhook-event-writer';
import { GuardedWebhookTransport, WebhookTransport } from './webhook-transport';

/** The delivery engine: events fanned out into deliveries, and the calls that send them. */
@Module({
  imports: [WebhooksModule, StreamModule],
  providers: [
    DeliveriesRepository,
    AttemptRecorder,
    FanOutService,
    FanOutController,
    DeliveryWorker,
    DirectFanOut,
    RetentionPurgeService,
    WebhookEventWriter,
    { provide: WebhookTransport, useClass: GuardedWebhookTransport },
  ],
  exports: [DeliveriesRepository, WebhookEventWriter],
})
export class DispatchModule {}
