import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { AccountsConfig } from '../accounts.config';
import { SmtpLoginFailuresRepository } from './smtp-login-failures.repository';

const PURGE_BATCH = 1_000;
const MAX_PURGE_BATCHES_PER_RUN = 10;

/** Forgets failed-login counts whose window and block have both run out, in bounded batches. */
@Injectable()
export class SmtpLoginFailuresPurgeService {
  private readonly logger = new Logger(SmtpLoginFailuresPurgeService.name);

  constructor(
    private readonly failures: SmtpLoginFailuresRepository,
    private readonly config: AccountsConfig,
  ) {}

  @PeriodicJob<AccountsConfig>({
    name: 'smtp login failures purge',
    intervalMs: (config) => config.SMTP_LOGIN_FAILURES_PURGE_INTERVAL_MS,
  })
  async purge(run: JobRun): Promise<void> {
    const now = new Date();
    const purged = await purgeInBatches(
      () => this.failures.purgeExpired(now, this.config.SMTP_LOGIN_FAILURE_WINDOW_MS, PURGE_BATCH),
      {
        batchSize: PURGE_BATCH,
        maxBatches: MAX_PURGE_BATCHES_PER_RUN,
        stopped: () => run.stopping,
      },
    );
    if (purged > 0) this.logger.log(`purged ${purged} expired smtp login failure counts`);
  }
}
