import { Module } from '@nestjs/common';

import { RoutesModule } from '../routes/routes.module';
import { RouteStreamModule } from '../stream/route-stream.module';
import { RouteDeliveriesRepository } from './route-deliveries.repository';
import { RouteDeliveryWorker } from './route-delivery-worker.service';
import { RoutedMailController } from './routed-mail.controller';
import { RoutedMailIntake } from './routed-mail-intake.service';
import { RoutedMailPurge } from './routed-mail-purge.service';

/** The route delivery engine: routed mail taken from the MX, then POSTed to the route URLs. */
@Module({
  imports: [RoutesModule, RouteStreamModule],
  providers: [
    RoutedMailController,
    RoutedMailIntake,
    RouteDeliveriesRepository,
    RouteDeliveryWorker,
    RoutedMailPurge,
  ],
})
export class DeliveryModule {}
