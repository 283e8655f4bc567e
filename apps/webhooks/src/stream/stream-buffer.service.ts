import { WebhookStreamSubjects } from '@envoi/contracts-webhooks';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { type NewStreamEvent, StreamEventsRepository } from './stream-events.repository';

/**
 * Buffers events for stream listeners and tells the gateways (a core NATS broadcast, at most
 * once: a listener also reads the buffer when it attaches and on every renewal).
 */
@Injectable()
export class StreamBuffer {
  private readonly logger = new Logger(StreamBuffer.name);

  constructor(
    private readonly events: StreamEventsRepository,
    private readonly rpc: RpcClient,
    private readonly config: WebhooksConfig,
  ) {}

  async append(events: readonly NewStreamEvent[]): Promise<void> {
    const webhookIds = await this.events.append(events, this.config.WEBHOOK_STREAM_BUFFER_MAX);
    if (webhookIds.length === 0) return;
    try {
      this.rpc.emit(WebhookStreamSubjects.appended, { webhook_ids: webhookIds });
    } catch (error) {
      this.logger.warn(`could not announce buffered stream events: ${String(error)}`);
    }
  }
}
