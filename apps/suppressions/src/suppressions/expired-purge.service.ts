import { PeriodicRun, purgeInBatches } from '@envoi/shared-database';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';

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
export class ExpiredPurgeService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(ExpiredPurgeService.name);
  private readonly periodic: PeriodicRun;

  constructor(
    private readonly suppressions: SuppressionsRepository,
    private readonly processedEvents: ProcessedEventsRepository,
    private readonly config: SuppressionsConfig,
  ) {
    this.periodic = new PeriodicRun(
      () =>
        this.purgeExpired()
          .then(async (purged) => {
            if (purged > 0) this.logger.log(`purged ${purged} expired suppressions`);
            await this.purgeProcessedEvents();
          })
          .catch((error: unknown) =>
            this.logger.warn(`purging expired suppressions failed: ${String(error)}`),
          ),
      config.SUPPRESSION_PURGE_INTERVAL_MS,
    );
  }

  onApplicationBootstrap(): void {
    this.periodic.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.periodic.stop();
  }

  /** Deletes expired suppressions in at most MAX_PURGE_BATCHES_PER_RUN batches; returns how many. */
  purgeExpired(): Promise<number> {
    return this.purgeWith(() =>
      this.suppressions.purgeExpired(this.config.SUPPRESSION_PURGE_BATCH),
    );
  }

  /** Deletes records of delivery events older than PROCESSED_EVENTS_RETENTION_MS, bounded alike. */
  purgeProcessedEvents(): Promise<number> {
    return this.purgeWith(() =>
      this.processedEvents.purgeOlderThan(
        this.config.PROCESSED_EVENTS_RETENTION_MS,
        this.config.SUPPRESSION_PURGE_BATCH,
      ),
    );
  }

  private purgeWith(purgeBatch: () => Promise<number>): Promise<number> {
    return purgeInBatches(purgeBatch, {
      batchSize: this.config.SUPPRESSION_PURGE_BATCH,
      maxBatches: MAX_PURGE_BATCHES_PER_RUN,
      stopped: () => this.periodic.stopped,
    });
  }
}
