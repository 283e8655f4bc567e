import { Module } from '@nestjs/common';

import { AccountsRepositoryModule } from '../accounts/accounts-repository.module';
import { UsersModule } from '../users/users.module';
import { MembersController } from './members.controller';
import { MembersRepository } from './members.repository';
import { MembersService } from './members.service';

@Module({
  imports: [AccountsRepositoryModule, UsersModule],
  controllers: [MembersController],
  providers: [MembersService, MembersRepository],
  exports: [MembersService],
})
export class MembersModule {}
