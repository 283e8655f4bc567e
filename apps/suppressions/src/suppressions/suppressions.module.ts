import { Module } from '@nestjs/common';

import { AccountDomains } from './account-domains.service';
import { AutomaticSuppressionsService } from './automatic-suppressions.service';
import { DeliveryEventsController } from './delivery-events.controller';
import { ExpiredPurgeService } from './expired-purge.service';
import { ProcessedEventsRepository } from './processed-events.repository';
import { SuppressionChangeEvents } from './suppression-change-events';
import { SuppressionsController } from './suppressions.controller';
import { SuppressionsRepository } from './suppressions.repository';
import { SuppressionsService } from './suppressions.service';

@Module({
  controllers: [SuppressionsController],
  providers: [
    SuppressionsService,
    SuppressionsRepository,
    SuppressionChangeEvents,
    ProcessedEventsRepository,
    AccountDomains,
    ExpiredPurgeService,
    AutomaticSuppressionsService,
    DeliveryEventsController,
  ],
})
export class SuppressionsModule {}
