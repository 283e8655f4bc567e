import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { AccountsConfig } from '../accounts.config';
import { periodKey } from './billing-period';
import { ReceptionCountsRepository } from './reception-counts.repository';

/** Statements one run makes at most before it waits for the next interval. */
export const MAX_PURGE_BATCHES_PER_RUN = 10;

/**
 * The ids of counted messages matter only while their events can still come back: those of
 * periods that ended more than USAGE_DEDUPE_RETENTION_MS ago are deleted, in bounded batches.
 * The counters stay.
 */
@Injectable()
export class CountedReceptionsPurgeService {
  private readonly logger = new Logger(CountedReceptionsPurgeService.name);

  constructor(
    private readonly counts: ReceptionCountsRepository,
    private readonly config: AccountsConfig,
  ) {}

  @PeriodicJob<AccountsConfig>({
    name: 'counted receptions purge',
    intervalMs: (config) => config.USAGE_PURGE_INTERVAL_MS,
  })
  async purge(run: JobRun): Promise<void> {
    const purged = await this.purgeEndedPeriods(new Date(), run);
    if (purged > 0) this.logger.log(`purged ${purged} counted reception ids of ended periods`);
  }

  /** A period ended more than the retention before `now` iff it started before that moment's. */
  purgeEndedPeriods(now: Date, run?: JobRun): Promise<number> {
    const before = periodKey(new Date(now.getTime() - this.config.USAGE_DEDUPE_RETENTION_MS));
    return purgeInBatches(() => this.counts.purgeBefore(before, this.config.USAGE_PURGE_BATCH), {
      batchSize: this.config.USAGE_PURGE_BATCH,
      maxBatches: MAX_PURGE_BATCHES_PER_RUN,
      stopped: () => run?.stopping ?? false,
    });
  }
}
