import { PeriodicRun, purgeInBatches } from '@envoi/shared-database';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';

import { MessagesConfig } from '../messages.config';
import { AcceptedRequests } from './accepted-requests.service';

/**
 * Deletes the accepted requests past the idempotency window, on the retention purge's interval
 * and in its bounded batches, on every replica.
 */
@Injectable()
export class AcceptedRequestsPurger implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(AcceptedRequestsPurger.name);
  private readonly periodic: PeriodicRun;

  constructor(
    private readonly acceptedRequests: AcceptedRequests,
    private readonly config: MessagesConfig,
  ) {
    this.periodic = new PeriodicRun(() => this.purge(), config.RETENTION_PURGE_INTERVAL_MS);
  }

  onApplicationBootstrap(): void {
    this.periodic.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.periodic.stop();
  }

  /** One bounded run; a failure is logged and retried at the next interval. */
  async purge(): Promise<void> {
    const batchSize = this.config.RETENTION_PURGE_BATCH;
    try {
      const purged = await purgeInBatches(() => this.acceptedRequests.purgeExpired(batchSize), {
        batchSize,
        maxBatches: this.config.RETENTION_PURGE_MAX_BATCHES,
        stopped: () => this.periodic.stopped,
      });
      if (purged > 0) this.logger.log(`purged ${purged} expired accepted requests`);
    } catch (error) {
      this.logger.warn(`accepted requests purge failed: ${String(error)}`);
    }
  }
}
