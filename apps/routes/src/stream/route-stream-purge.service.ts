import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { ListenerStreamStore } from '@envoi/shared-listener-streams';
import { Injectable, Logger } from '@nestjs/common';

import { RouteMatchEvents } from '../matching/route-match-events';
import { RoutesConfig } from '../routes.config';

/** Batches one run deletes at most, per table, before it waits for the next interval. */
const MAX_PURGE_BATCHES_PER_RUN = 10;

/**
 * Keeps route streams bounded: temporary routes without a listener for
 * ROUTE_STREAM_TEMPORARY_TTL_MS go (their buffers with them), and so do buffered events older
 * than ROUTE_STREAM_BUFFER_MAX_AGE_MS.
 */
@Injectable()
export class RouteStreamPurge {
  private readonly logger = new Logger(RouteStreamPurge.name);

  constructor(
    private readonly streams: ListenerStreamStore,
    private readonly config: RoutesConfig,
    private readonly matchEvents: RouteMatchEvents,
  ) {}

  @PeriodicJob<RoutesConfig>({
    name: 'route streams purge',
    intervalMs: (config) => config.ROUTE_PURGE_INTERVAL_MS,
  })
  async purge(run: JobRun): Promise<void> {
    const purged = await this.streams.purge(
      {
        temporaryTtlMs: this.config.ROUTE_STREAM_TEMPORARY_TTL_MS,
        bufferMaxAgeMs: this.config.ROUTE_STREAM_BUFFER_MAX_AGE_MS,
      },
      {
        batchSize: this.config.ROUTE_PURGE_BATCH,
        maxBatches: MAX_PURGE_BATCHES_PER_RUN,
        stopped: () => run.stopping,
      },
    );
    // The purged routes' domains are not known here: every route set may have changed.
    if (purged.targets > 0) this.matchEvents.changed([null]);
    if (purged.targets + purged.events > 0) {
      this.logger.log(
        `purged ${purged.targets} idle temporary routes, ${purged.events} aged stream events`,
      );
    }
  }
}
