import { Module } from '@nestjs/common';

import { DispatchModule } from '../dispatch/dispatch.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DeliveryHistoryRepository } from './delivery-history.repository';
import { WebhookDeliveriesController } from './webhook-deliveries.controller';
import { WebhookDeliveriesService } from './webhook-deliveries.service';

/** Beyond the reference: the delivery history of an endpoint, manual retries, sample events. */
@Module({
  imports: [WebhooksModule, DispatchModule],
  controllers: [WebhookDeliveriesController],
  providers: [WebhookDeliveriesService, DeliveryHistoryRepository],
})
export class DeliveriesApiModule {}
