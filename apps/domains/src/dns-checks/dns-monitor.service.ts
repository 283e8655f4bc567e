import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { DomainsConfig } from '../domains.config';
import { DomainsRepository } from '../domains/domains.repository';
import { DnsCheckService } from './dns-check.service';

/** Claimed batches one poll works through at most before it waits for the next poll. */
const MAX_BATCHES_PER_POLL = 10;

/** Runs `task` over `items`, at most `limit` at a time. */
export async function forEachLimited<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++];
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The periodic re-check of every domain, shared by any number of replicas. */
@Injectable()
export class DnsMonitorService {
  private readonly logger = new Logger(DnsMonitorService.name);

  constructor(
    private readonly domains: DomainsRepository,
    private readonly config: DomainsConfig,
    private readonly checks: DnsCheckService,
  ) {}

  /** Checks the domains that are due, in bounded batches; returns how many were checked. */
  @PeriodicJob<DomainsConfig>({
    name: 'periodic DNS checks',
    intervalMs: (config) => config.DNS_RECHECK_POLL_MS,
  })
  async runDueChecks(run?: JobRun): Promise<number> {
    let total = 0;
    for (let batch = 0; batch < MAX_BATCHES_PER_POLL && !run?.stopping; batch++) {
      const ids = await this.claimDue();
      if (ids.length === 0) break;
      const domains = await this.domains.findByIds(ids);
      await forEachLimited(domains, this.config.DNS_RECHECK_CONCURRENCY, async (domain) => {
        try {
          await this.checks.check(domain, 'periodic');
        } catch (error) {
          this.logger.warn(`periodic DNS check of ${domain.name} failed: ${String(error)}`);
        }
      });
      total += domains.length;
      if (ids.length < this.config.DNS_RECHECK_BATCH) break;
    }
    return total;
  }

  private async claimDue(): Promise<string[]> {
    return this.domains.claimDue(this.config.DNS_RECHECK_BATCH, this.leaseMs());
  }

  /** Long enough for a check whose every lookup times out, twice (the confirmation). */
  private leaseMs(): number {
    return Math.max(60_000, this.config.DNS_TIMEOUT_MS * this.config.DNS_TRIES * 40);
  }
}
