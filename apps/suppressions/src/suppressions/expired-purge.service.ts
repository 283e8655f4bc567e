import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { SuppressionsConfig } from '../suppressions.config';
import { ProcessedEventsRepository } from './processed-events.repository';
import { SuppressionsRepository } from './suppressions.repository';

/** Batches one run deletes at most before it waits for the next interval. */
export const MAX_PURGE_BATCHES_PER_RUN = 10;

/**
 * Expired suppressions are no suppressions (every read filters them out); this deletes them
 * periodically, in bounded batches, so the table holds only what matters. Records of handled
 * delivery events go the same way once the EVENTS stream can no longer deliver them.
 */
@Injectable()
export class ExpiredPurgeService {
  private readonly logger = new Logger(ExpiredPurgeService.name);

  constructor(
    private readonly suppressions: SuppressionsRepository,
    private readonly processedEvents: ProcessedEventsRepository,
    private readonly config: SuppressionsConfig,
  ) {}

  @PeriodicJob<SuppressionsConfig>({
    name: 'expired suppressions purge',
    intervalMs: (config) => config.SUPPRESSION_PURGE_INTERVAL_MS,
  })
  async purge(run: JobRun): Promise<void> {
    const purged = await this.purgeExpired(run);
    if (purged > 0) this.logger.log(`purged ${purged} expired suppressions`);
    await this.purgeProcessedEvents(run);
  }

  /** Deletes expired suppressions in at most MAX_PURGE_BATCHES_PER_RUN batches; returns how many. */
  purgeExpired(run?: JobRun): Promise<number> {
    return this.purgeWith(
      () => this.suppressions.purgeExpired(this.config.SUPPRESSION_PURGE_BATCH),
      run,
    );
  }

  /** Deletes records of delivery events older than PROCESSED_EVENTS_RETENTION_MS, bounded alike. */
  purgeProcessedEvents(run?: JobRun): Promise<number> {
    return this.purgeWith(
      () =>
        this.processedEvents.purgeOlderThan(
          this.config.PROCESSED_EVENTS_RETENTION_MS,
          this.config.SUPPRESSION_PURGE_BATCH,
        ),
      run,
    );
  }

  private purgeWith(purgeBatch: () => Promise<number>, run?: JobRun): Promise<number> {
    return purgeInBatches(purgeBatch, {
      batchSize: this.config.SUPPRESSION_PURGE_BATCH,
      maxBatches: MAX_PURGE_BATCHES_PER_RUN,
      stopped: () => run?.stopping ?? false,
    });
  }
}
