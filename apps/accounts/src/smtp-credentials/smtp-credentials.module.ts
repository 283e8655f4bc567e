import { Module } from '@nestjs/common';

import { AccountsConfig } from '../accounts.config';
import { SmtpCredentialEvents } from './smtp-credential-events';
import { SmtpCredentialsController } from './smtp-credentials.controller';
import { SmtpCredentialsRepository } from './smtp-credentials.repository';
import { SmtpCredentialsService } from './smtp-credentials.service';
import { SmtpLoginService } from './smtp-login.service';
import { SmtpLoginFailuresRepository } from './smtp-login-failures.repository';
import { SmtpLoginFailuresPurgeService } from './smtp-login-failures-purge.service';
import { SmtpPasswordCipher } from './smtp-password-cipher';

@Module({
  controllers: [SmtpCredentialsController],
  providers: [
    SmtpCredentialsService,
    SmtpCredentialsRepository,
    SmtpCredentialEvents,
    SmtpLoginService,
    SmtpLoginFailuresRepository,
    SmtpLoginFailuresPurgeService,
    {
      provide: SmtpPasswordCipher,
      useFactory: (config: AccountsConfig) =>
        new SmtpPasswordCipher(config.SMTP_PASSWORD_ENCRYPTION_KEY),
      inject: [AccountsConfig],
    },
  ],
})
export class SmtpCredentialsModule {}
