import { PeriodicRun, purgeInBatches } from '@envoi/shared-database';
import {
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { MessagesConfig } from '../messages.config';

/**
 * Data retention: empties up to $1 contents whose time has come, earliest first. Replicas purging
 * at the same time skip each other's rows (SKIP LOCKED) instead of waiting for them.
 */
const PURGE_CONTENT_SQL = `
  WITH purged AS (
    UPDATE messages.message_contents SET raw = NULL, purged_at = now()
    WHERE message_id IN (
      SELECT message_id FROM messages.message_contents
      WHERE raw IS NOT NULL AND purge_at <= now()
      ORDER BY purge_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

/** Metadata retention: deletes up to $1 messages past `retain_until` (their contents cascade). */
const PURGE_METADATA_SQL = `
  WITH purged AS (
    DELETE FROM messages.messages
    WHERE id IN (
      SELECT id FROM messages.messages
      WHERE retain_until <= now()
      ORDER BY retain_until
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

export interface PurgeCounts {
  contents: number;
  messages: number;
}

/**
 * Retention (platform notes 3.4): contents are purged (set to null) when their data retention
 * ends, messages deleted when their metadata retention ends. Runs periodically in bounded
 * batches on every replica.
 */
@Injectable()
export class RetentionPurgeService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RetentionPurgeService.name);
  private readonly periodic: PeriodicRun;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
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
    return {
      contents: await this.purgeWith(PURGE_CONTENT_SQL),
      messages: await this.purgeWith(PURGE_METADATA_SQL),
    };
  }

  private purgeWith(sql: string): Promise<number> {
    const batchSize = this.config.RETENTION_PURGE_BATCH;
    return purgeInBatches(
      async () => {
        const rows = await this.dataSource.query<Array<{ purged: number }>>(sql, [batchSize]);
        return rows[0]?.purged ?? 0;
      },
      {
        batchSize,
        maxBatches: this.config.RETENTION_PURGE_MAX_BATCHES,
        stopped: () => this.periodic.stopped,
      },
    );
  }
}
