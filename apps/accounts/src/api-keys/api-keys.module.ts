import { Module } from '@nestjs/common';

import { AccountsRepositoryModule } from '../accounts/accounts-repository.module';
import { SmtpCredentialsModule } from '../smtp-credentials/smtp-credentials.module';
import { ApiKeyEvents } from './api-key-events';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysRepository } from './api-keys.repository';
import { ApiKeysService } from './api-keys.service';
import { DomainEventsController } from './domain-events.controller';
import { DomainScopesRepository } from './domain-scopes.repository';
import { DomainScopesService } from './domain-scopes.service';
import { SubAccountKeysController } from './sub-account-keys.controller';
import { SubAccountKeysService } from './sub-account-keys.service';

@Module({
  imports: [AccountsRepositoryModule, SmtpCredentialsModule],
  controllers: [ApiKeysController, SubAccountKeysController],
  providers: [
    ApiKeysService,
    ApiKeysRepository,
    ApiKeyEvents,
    DomainScopesService,
    DomainScopesRepository,
    DomainEventsController,
    SubAccountKeysService,
  ],
  exports: [ApiKeysService],
})
export class ApiKeysModule {}
