import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable } from '@nestjs/common';

import { GatewayConfig } from '../gateway.config';
import { LOGGER } from '../logger.provider';
import { IdempotencyStore } from './idempotency-store';

/** Records deleted per statement, and statements per run, so one run stays short. */
const PURGE_BATCH = 1_000;
const MAX_BATCHES_PER_RUN = 50;

/**
 * Deletes expired idempotency records on an interval. Every replica runs it; SKIP LOCKED keeps
 * them from blocking each other.
 */
@Injectable()
export class IdempotencyPurger {
  constructor(
    private readonly store: IdempotencyStore,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** One run: batches until nothing expired is left or the batch budget is spent. */
  @PeriodicJob<GatewayConfig>({
    name: 'idempotency purge',
    intervalMs: (config) => config.IDEMPOTENCY_PURGE_INTERVAL_MS,
  })
  async purge(run?: JobRun): Promise<void> {
    const total = await purgeInBatches(() => this.store.purgeExpired(PURGE_BATCH), {
      batchSize: PURGE_BATCH,
      maxBatches: MAX_BATCHES_PER_RUN,
      stopped: () => run?.stopping ?? false,
    });
    if (total > 0) this.logger.debug({ deleted: total }, 'expired idempotency records purged');
  }
}
