import { Module } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { AccountDomains } from './account-domains.service';
import { WebhookSecretCipher } from './webhook-secret-cipher';
import { WebhookSubscriptions } from './webhook-subscriptions.service';
import { WebhooksController } from './webhooks.controller';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

@Module({
  controllers: [WebhooksController],
  providers: [
    {
      provide: WebhookSecretCipher,
      useFactory: (config: WebhooksConfig) =>
        new WebhookSecretCipher(config.WEBHOOK_SECRET_ENCRYPTION_KEY),
      inject: [WebhooksConfig],
    },
    WebhooksService,
    WebhooksRepository,
    AccountDomains,
    WebhookSubscriptions,
  ],
  exports: [WebhooksRepository, WebhookSecretCipher, WebhooksService, WebhookSubscriptions],
})
export class WebhooksModule {}
