import { Module } from '@nestjs/common';

import { ApiKeysModule } from '../api-keys/api-keys.module';
import { MembersModule } from '../members/members.module';
import { UsersModule } from '../users/users.module';
import { AccountsController } from './accounts.controller';
import { AccountsService } from './accounts.service';
import { AccountsRepositoryModule } from './accounts-repository.module';

@Module({
  imports: [AccountsRepositoryModule, UsersModule, MembersModule, ApiKeysModule],
  controllers: [AccountsController],
  providers: [AccountsService],
})
export class AccountsModule {}
