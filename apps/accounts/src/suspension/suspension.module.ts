import { Module } from '@nestjs/common';

import { SubAccountEvents } from '../sub-accounts/sub-account-events';
import { SuspensionController } from './suspension.controller';
import { SuspensionRepository } from './suspension.repository';
import { SuspensionService } from './suspension.service';

/** Operators' suspensions of any account, and account statuses for the other services. */
@Module({
  controllers: [SuspensionController],
  providers: [SuspensionService, SuspensionRepository, SubAccountEvents],
})
export class SuspensionModule {}
