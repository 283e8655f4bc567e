import { Module } from '@nestjs/common';

import { DeliveryEventsController } from './delivery-events.controller';
import { DeliveryEventsService } from './delivery-events.service';

/** The status machine: delivery events (EVENTS stream) → message statuses and attempt logs. */
@Module({
  providers: [DeliveryEventsService, DeliveryEventsController],
})
export class DeliveryEventsModule {}
