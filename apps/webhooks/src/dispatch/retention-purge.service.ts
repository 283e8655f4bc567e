import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { ListenerStreamStore } from '@envoi/shared-listener-streams';
import { Injectable, Logger } from '@nestjs/common';

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
    private readonly streams: ListenerStreamStore,
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
    const streams = await this.streams.purge(
      {
        temporaryTtlMs: this.config.WEBHOOK_STREAM_TEMPORARY_TTL_MS,
        bufferMaxAgeMs: this.config.WEBHOOK_STREAM_BUFFER_MAX_AGE_MS,
      },
      bounds,
    );
    if (deliveries + streams.targets + streams.events > 0) {
      this.logger.log(
        `purged ${deliveries} settled deliveries, ${streams.targets} idle temporary webhooks, ${streams.events} aged stream events`,
      );
    }
  }
}
