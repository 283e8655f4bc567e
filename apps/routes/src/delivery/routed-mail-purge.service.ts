import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { RoutesConfig } from '../routes.config';
import { RouteDeliveriesRepository } from './route-deliveries.repository';

/** Batches one run deletes at most before it waits for the next interval. */
const MAX_PURGE_BATCHES_PER_RUN = 10;

/**
 * Keeps the routed messages bounded: one whose calls are all settled goes, bytes and calls, after
 * ROUTE_MESSAGE_RETENTION_MS; one with a call still pending stays.
 */
@Injectable()
export class RoutedMailPurge {
  private readonly logger = new Logger(RoutedMailPurge.name);

  constructor(
    private readonly deliveries: RouteDeliveriesRepository,
    private readonly config: RoutesConfig,
  ) {}

  @PeriodicJob<RoutesConfig>({
    name: 'routed mail purge',
    intervalMs: (config) => config.ROUTE_PURGE_INTERVAL_MS,
  })
  async purge(run: JobRun): Promise<void> {
    const batch = this.config.ROUTE_PURGE_BATCH;
    const purged = await purgeInBatches(
      () => this.deliveries.purgeSettled(this.config.ROUTE_MESSAGE_RETENTION_MS, batch),
      { batchSize: batch, maxBatches: MAX_PURGE_BATCHES_PER_RUN, stopped: () => run.stopping },
    );
    if (purged > 0) this.logger.log(`purged ${purged} routed messages`);
  }
}
