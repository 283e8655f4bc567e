import { Module } from '@nestjs/common';

import { RetentionRepository } from '../retention/retention.repository';
import { DeliveryEventsController } from './delivery-events.controller';
import { DeliveryEventsService } from './delivery-events.service';
import { DeliveryStatesRepository } from './delivery-states.repository';

/** The status machine: delivery events (EVENTS stream) → message statuses and attempt logs. */
@Module({
  providers: [
    DeliveryStatesRepository,
    RetentionRepository,
    DeliveryEventsService,
    DeliveryEventsController,
  ],
})
export class DeliveryEventsModule {}
