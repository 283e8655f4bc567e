import { Module } from '@nestjs/common';

import { WebhooksModule } from '../webhooks/webhooks.module';
import { StreamBuffer } from './stream-buffer.service';
import { StreamEventsRepository } from './stream-events.repository';
import { WebhookStreamController } from './webhook-stream.controller';
import { WebhookStreamService } from './webhook-stream.service';

/** Webhook streams for `webhooks listen`-style tools (platform notes 1.12). */
@Module({
  imports: [WebhooksModule],
  controllers: [WebhookStreamController],
  providers: [StreamEventsRepository, StreamBuffer, WebhookStreamService],
  exports: [StreamBuffer, StreamEventsRepository],
})
export class StreamModule {}
