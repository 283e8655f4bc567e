import { Module } from '@nestjs/common';

import { AccountsRepositoryModule } from '../accounts/accounts-repository.module';
import { SubAccountCountsService } from './sub-account-counts.service';
import { SubAccountEvents } from './sub-account-events';
import { SubAccountsController } from './sub-accounts.controller';
import { SubAccountsRepository } from './sub-accounts.repository';
import { SubAccountsService } from './sub-accounts.service';

@Module({
  imports: [AccountsRepositoryModule],
  controllers: [SubAccountsController],
  providers: [SubAccountsService, SubAccountsRepository, SubAccountCountsService, SubAccountEvents],
})
export class SubAccountsModule {}
