import { purgeInBatches } from '@envoi/shared-database';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger } from '@nestjs/common';

import { MessagesConfig } from '../messages.config';
import { RetentionRepository } from './retention.repository';

export interface PurgeCounts {
  /** Stored raw contents and sends emptied. */
  contents: number;
  /** Messages and sends deleted. */
  messages: number;
}

/**
 * Retention (platform notes 3.4): contents (stored raw contents, sends' contents) are purged
 * (set to null) when their data retention ends, messages and sends deleted when their metadata
 * retention ends. Runs periodically in bounded batches on every replica.
 */
@Injectable()
export class RetentionPurgeService {
  private readonly logger = new Logger(RetentionPurgeService.name);

  constructor(
    private readonly retention: RetentionRepository,
    private readonly config: MessagesConfig,
  ) {}

  @PeriodicJob<MessagesConfig>({
    name: 'retention purge',
    intervalMs: (config) => config.RETENTION_PURGE_INTERVAL_MS,
  })
  async run(run: JobRun): Promise<void> {
    const { contents, messages } = await this.purge(run);
    if (contents + messages > 0) {
      this.logger.log(`retention purged ${contents} contents and ${messages} messages`);
    }
  }

  /** One bounded run: contents first, then metadata; returns how many of each. */
  async purge(run?: JobRun): Promise<PurgeCounts> {
    const purge = (batch: (limit: number) => Promise<number>) => this.purgeWith(batch, run);
    const contents = await purge((limit) => this.retention.purgeDueContents(limit));
    const sends = await purge((limit) => this.retention.purgeDueSends(limit));
    const messages = await purge((limit) => this.retention.purgeExpiredMessages(limit));
    const sendsDeleted = await purge((limit) => this.retention.purgeExpiredSends(limit));
    return { contents: contents + sends, messages: messages + sendsDeleted };
  }

  private purgeWith(purgeBatch: (limit: number) => Promise<number>, run?: JobRun): Promise<number> {
    const batchSize = this.config.RETENTION_PURGE_BATCH;
    return purgeInBatches(() => purgeBatch(batchSize), {
      batchSize,
      maxBatches: this.config.RETENTION_PURGE_MAX_BATCHES,
      stopped: () => run?.stopping ?? false,
    });
  }
}
