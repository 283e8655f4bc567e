import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { DeliveryConfig } from '../delivery.config';
import { InboundReportsRepository } from './inbound-reports.repository';

/** Rows one statement deletes, and statements one run makes, at most. */
const PURGE_BATCH = 1_000;
const MAX_PURGE_BATCHES_PER_RUN = 10;

/**
 * Unmatched bounce and complaint mail is kept INBOUND_UNMATCHED_RETENTION_MS, the records of
 * applied reports INBOUND_REPORTS_RETENTION_MS; this deletes what is older, in bounded batches.
 */
@Injectable()
export class InboundPurgeService {
  private readonly logger = new Logger(InboundPurgeService.name);

  constructor(
    private readonly reports: InboundReportsRepository,
    private readonly config: DeliveryConfig,
  ) {}

  @PeriodicJob<DeliveryConfig>({
    name: 'inbound reports purge',
    intervalMs: (config) => config.INBOUND_PURGE_INTERVAL_MS,
  })
  async purge(run?: JobRun): Promise<void> {
    const now = Date.now();
    const unmatchedBefore = new Date(now - this.config.INBOUND_UNMATCHED_RETENTION_MS);
    const reportsBefore = new Date(now - this.config.INBOUND_REPORTS_RETENTION_MS);
    const unmatched = await this.inBatches(
      () => this.reports.purgeUnmatched(unmatchedBefore, PURGE_BATCH),
      run,
    );
    const reports = await this.inBatches(
      () => this.reports.purgeReports(reportsBefore, PURGE_BATCH),
      run,
    );
    if (unmatched + reports > 0) {
      this.logger.log(`purged ${unmatched} unmatched inbound mails, ${reports} report records`);
    }
  }

  private inBatches(purgeBatch: () => Promise<number>, run?: JobRun): Promise<number> {
    return purgeInBatches(purgeBatch, {
      batchSize: PURGE_BATCH,
      maxBatches: MAX_PURGE_BATCHES_PER_RUN,
      stopped: () => run?.stopping ?? false,
    });
  }
}
