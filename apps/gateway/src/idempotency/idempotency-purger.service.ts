import { PeriodicRun, purgeInBatches } from '@envoi/shared-database';
import type { Logger } from '@envoi/shared-observability';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';

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
export class IdempotencyPurger implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly periodic: PeriodicRun;

  constructor(
    private readonly store: IdempotencyStore,
    config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.periodic = new PeriodicRun(() => this.purge(), config.IDEMPOTENCY_PURGE_INTERVAL_MS);
  }

  onApplicationBootstrap(): void {
    this.periodic.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.periodic.stop();
  }

  /** One run: batches until nothing expired is left or the batch budget is spent. */
  async purge(): Promise<void> {
    try {
      const total = await purgeInBatches(() => this.store.purgeExpired(PURGE_BATCH), {
        batchSize: PURGE_BATCH,
        maxBatches: MAX_BATCHES_PER_RUN,
      });
      if (total > 0) this.logger.debug({ deleted: total }, 'expired idempotency records purged');
    } catch (error) {
      this.logger.warn({ err: error }, 'idempotency purge failed; retrying next interval');
    }
  }
}
