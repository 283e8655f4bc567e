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
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.purge().finally(() => (this.running = undefined));
    }, this.config.IDEMPOTENCY_PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One run: batches until nothing expired is left or the batch budget is spent. */
  async purge(): Promise<void> {
    try {
      let total = 0;
      for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch += 1) {
        const deleted = await this.store.purgeExpired(PURGE_BATCH);
        total += deleted;
        if (deleted < PURGE_BATCH) break;
      }
      if (total > 0) this.logger.debug({ deleted: total }, 'expired idempotency records purged');
    } catch (error) {
      this.logger.warn({ err: error }, 'idempotency purge failed; retrying next interval');
    }
  }
}
