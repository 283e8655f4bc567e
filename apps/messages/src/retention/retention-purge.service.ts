import { PeriodicRun, purgeInBatches } from '@envoi/shared-database';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';

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
 * retention ends. Runs periodically in bounded
 * batches on every replica.
 */
@Injectable()
export class RetentionPurgeService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RetentionPurgeService.name);
  private readonly periodic: PeriodicRun;

  constructor(
    private readonly retention: RetentionRepository,
    private readonly config: MessagesConfig,
  ) {
    this.periodic = new PeriodicRun(
      () =>
        this.purge().then(
          ({ contents, messages }) => {
            if (contents + messages > 0) {
              this.logger.log(`retention purged ${contents} contents and ${messages} messages`);
            }
          },
          (error: unknown) => this.logger.warn(`retention purge failed: ${String(error)}`),
        ),
      config.RETENTION_PURGE_INTERVAL_MS,
    );
  }

  onApplicationBootstrap(): void {
    this.periodic.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.periodic.stop();
  }

  /** One bounded run: contents first, then metadata; returns how many of each. */
  async purge(): Promise<PurgeCounts> {
    const contents = await this.purgeWith((limit) => this.retention.purgeDueContents(limit));
    const sends = await this.purgeWith((limit) => this.retention.purgeDueSends(limit));
    const messages = await this.purgeWith((limit) => this.retention.purgeExpiredMessages(limit));
    const sendsDeleted = await this.purgeWith((limit) => this.retention.purgeExpiredSends(limit));
    return { contents: contents + sends, messages: messages + sendsDeleted };
  }

  private purgeWith(purgeBatch: (limit: number) => Promise<number>): Promise<number> {
    const batchSize = this.config.RETENTION_PURGE_BATCH;
    return purgeInBatches(() => purgeBatch(batchSize), {
      batchSize,
      maxBatches: this.config.RETENTION_PURGE_MAX_BATCHES,
      stopped: () => this.periodic.stopped,
    });
  }
}
