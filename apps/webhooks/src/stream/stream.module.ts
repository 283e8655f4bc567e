import { WebhookStreamSubjects } from '@envoi/contracts-webhooks';
import {
  listenerStreamController,
  listenerStreamProviders,
  ListenerStreams,
  ListenerStreamStore,
} from '@envoi/shared-listener-streams';
import { Module } from '@nestjs/common';

import { WEBHOOKS_SCHEMA } from '../database/data-source-options';
import { WebhooksConfig } from '../webhooks.config';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { WebhookStreamController } from './webhook-stream.controller';
import { WebhookStreamService } from './webhook-stream.service';

/** Webhook streams for `webhooks listen`-style tools (platform notes 1.12). */
@Module({
  imports: [WebhooksModule],
  controllers: [WebhookStreamController, listenerStreamController(WebhookStreamSubjects)],
  providers: [
    ...listenerStreamProviders({
      tables: {
        schema: WEBHOOKS_SCHEMA,
        targets: 'webhooks',
        events: 'webhook_stream_events',
        targetColumn: 'webhook_id',
      },
      subjects: WebhookStreamSubjects,
      config: WebhooksConfig,
      bufferMax: (config) => config.WEBHOOK_STREAM_BUFFER_MAX,
      access: WebhookStreamService,
    }),
    WebhookStreamService,
  ],
  exports: [ListenerStreams, ListenerStreamStore],
})
export class StreamModule {}
