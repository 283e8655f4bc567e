import { Module } from '@nestjs/common';

import { AccountsRepository } from './accounts.repository';

/** The accounts table, for the features that check an account (members, API keys) as well. */
@Module({ providers: [AccountsRepository], exports: [AccountsRepository] })
export class AccountsRepositoryModule {}
