import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { StreamEventsRepository } from '../stream/stream-events.repository';
import { WebhooksConfig } from '../webhooks.config';
import { DeliveriesRepository } from './deliveries.repository';

/** Batches one run deletes at most, per table, before it waits for the next interval. */
const MAX_PURGE_BATCHES_PER_RUN = 10;

/**
 * Keeps the engine's tables bounded: settled deliveries and their attempts go after
 * WEBHOOK_DELIVERY_RETENTION_MS; temporary stream webhooks without a listener for
 * WEBHOOK_STREAM_TEMPORARY_TTL_MS and stream events older than WEBHOOK_STREAM_BUFFER_MAX_AGE_MS go
 * too.
 */
@Injectable()
export class RetentionPurgeService {
  private readonly logger = new Logger(RetentionPurgeService.name);

  constructor(
    private readonly deliveries: DeliveriesRepository,
    private readonly streams: StreamEventsRepository,
    private readonly config: WebhooksConfig,
  ) {}

  @PeriodicJob<WebhooksConfig>({
    name: 'webhook deliveries purge',
    intervalMs: (config) => config.WEBHOOK_PURGE_INTERVAL_MS,
  })
  async purge(run: JobRun): Promise<void> {
    const batch = this.config.WEBHOOK_PURGE_BATCH;
    const bounds = {
      batchSize: batch,
      maxBatches: MAX_PURGE_BATCHES_PER_RUN,
      stopped: () => run.stopping,
    };
    const deliveries = await purgeInBatches(
      () => this.deliveries.purgeSettled(this.config.WEBHOOK_DELIVERY_RETENTION_MS, batch),
      bounds,
    );
    const webhooks = await purgeInBatches(
      () => this.streams.purgeIdleTemporary(this.config.WEBHOOK_STREAM_TEMPORARY_TTL_MS, batch),
      bounds,
    );
    const streamEvents = await purgeInBatches(
      () => this.streams.purgeAged(this.config.WEBHOOK_STREAM_BUFFER_MAX_AGE_MS, batch),
      bounds,
    );
    if (deliveries + webhooks + streamEvents > 0) {
      this.logger.log(
        `purged ${deliveries} settled deliveries, ${webhooks} idle temporary webhooks, ${streamEvents} aged stream events`,
      );
    }
  }
}
