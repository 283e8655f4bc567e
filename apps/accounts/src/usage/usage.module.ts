import { Module } from '@nestjs/common';

import { CountedReceptionsPurgeService } from './counted-receptions-purge.service';
import { ReceptionCountsRepository } from './reception-counts.repository';
import { ReceptionEventsController } from './reception-events.controller';
import { UsageController } from './usage.controller';
import { UsageService } from './usage.service';

/** Reception counting per billing period and the sub-accounts usage report (spec 2.6). */
@Module({
  controllers: [UsageController],
  providers: [
    ReceptionCountsRepository,
    ReceptionEventsController,
    CountedReceptionsPurgeService,
    UsageService,
  ],
})
export class UsageModule {}
