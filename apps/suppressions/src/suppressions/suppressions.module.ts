import { Module } from '@nestjs/common';

import { ExpiredPurgeService } from './expired-purge.service';
import { SuppressionsController } from './suppressions.controller';
import { SuppressionsService } from './suppressions.service';

@Module({
  controllers: [SuppressionsController],
  providers: [SuppressionsService, ExpiredPurgeService],
})
export class SuppressionsModule {}
