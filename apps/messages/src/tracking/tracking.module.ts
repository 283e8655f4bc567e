import { Module } from '@nestjs/common';

import { TrackingController } from './tracking.controller';
import { TrackingRepository } from './tracking.repository';
import { TrackingHitsService } from './tracking-hits.service';

/** Open and click tracking: the hits from the public routes, counted and published. */
@Module({
  controllers: [TrackingController],
  providers: [TrackingRepository, TrackingHitsService],
})
export class TrackingModule {}
