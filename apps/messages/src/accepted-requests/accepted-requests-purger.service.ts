import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { MessagesConfig } from '../messages.config';
import { AcceptedRequests } from './accepted-requests.service';

/**
 * Deletes the accepted requests past the idempotency window, on the retention purge's interval
 * and in its bounded batches, on every replica.
 */
@Injectable()
export class AcceptedRequestsPurger {
  private readonly logger = new Logger(AcceptedRequestsPurger.name);

  constructor(
    private readonly acceptedRequests: AcceptedRequests,
    private readonly config: MessagesConfig,
  ) {}

  /** One bounded run. */
  @PeriodicJob<MessagesConfig>({
    name: 'accepted requests purge',
    intervalMs: (config) => config.RETENTION_PURGE_INTERVAL_MS,
  })
  async purge(run?: JobRun): Promise<void> {
    const batchSize = this.config.RETENTION_PURGE_BATCH;
    const purged = await purgeInBatches(() => this.acceptedRequests.purgeExpired(batchSize), {
      batchSize,
      maxBatches: this.config.RETENTION_PURGE_MAX_BATCHES,
      stopped: () => run?.stopping ?? false,
    });
    if (purged > 0) this.logger.log(`purged ${purged} expired accepted requests`);
  }
}
