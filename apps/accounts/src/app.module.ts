import { DomainsStreamSubjects } from '@envoi/contracts-domains';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { ServiceKitModule } from '@envoi/shared-kit';
import { type DynamicModule, Module } from '@nestjs/common';

import { AccountsConfig, SERVICE_NAME } from './accounts.config';
import { AccountsModule } from './accounts/accounts.module';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { accountsDataSourceOptions } from './database/data-source-options';
import { MembersModule } from './members/members.module';
import { NOTIFICATION_SUBJECTS } from './notifications/notification-events.controller';
import { NotificationsModule } from './notifications/notifications.module';
import { SmtpCredentialsModule } from './smtp-credentials/smtp-credentials.module';
import { SubAccountsModule } from './sub-accounts/sub-accounts.module';
import { SuspensionModule } from './suspension/suspension.module';
import { UsageModule } from './usage/usage.module';
import { UsersModule } from './users/users.module';

/** The accounts service: identity and tenancy over NATS, PostgreSQL schema "accounts". */
@Module({})
export class AppModule {
  static forRoot(config: AccountsConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          service: SERVICE_NAME,
          config,
          dataSource: accountsDataSourceOptions,
          outbox: { settings: config },
          consumes: [
            DomainsStreamSubjects.deleted,
            MessagesStreamSubjects.receptionBatch,
            MessagesStreamSubjects.sendReceptions,
            ...NOTIFICATION_SUBJECTS,
          ],
        }),
        UsersModule,
        MembersModule,
        ApiKeysModule,
        AccountsModule,
        SubAccountsModule,
        SuspensionModule,
        UsageModule,
        SmtpCredentialsModule,
        NotificationsModule,
      ],
    };
  }
}
