import { DomainsStreamSubjects } from '@envoi/contracts-domains';
import { NatsModule, StreamConsumersModule } from '@envoi/shared-nats';
import { DeadLetterRepository } from '@envoi/shared-outbox';
import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';

import { AccountsConfig, SERVICE_NAME } from './accounts.config';
import { AccountsModule } from './accounts/accounts.module';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { accountsDataSourceOptions } from './database/data-source-options';
import { MembersModule } from './members/members.module';
import { UsersModule } from './users/users.module';

/** The accounts service: identity and tenancy over NATS, PostgreSQL schema "accounts". */
@Module({})
export class AppModule {
  static forRoot(config: AccountsConfig): DynamicModule {
    return {
      module: AppModule,
      // The configuration is injectable everywhere.
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...accountsDataSourceOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
          // Fail the boot quickly rather than retrying for minutes; the orchestrator restarts us.
          retryAttempts: 3,
          retryDelay: 1_000,
        }),
        NatsModule.forRoot({ servers: config.natsServers(), name: SERVICE_NAME }),
        StreamConsumersModule.forRoot({
          consumes: [DomainsStreamSubjects.deleted],
          settings: AccountsConfig,
          service: SERVICE_NAME,
          deadLetters: DeadLetterRepository,
        }),
        UsersModule,
        MembersModule,
        ApiKeysModule,
        AccountsModule,
      ],
      providers: [{ provide: AccountsConfig, useValue: config }],
      exports: [AccountsConfig],
    };
  }
}
