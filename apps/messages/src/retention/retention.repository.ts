import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { MESSAGES_SCHEMA } from '../database/data-source-options';

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

/**
 * Data retention 0 ("deleted right after processing", platform notes 3.4): empties one message's
 * content at once, inside the caller's transaction (the one that made its status final). One
 * row; nothing when it is already purged.
 */
const PURGE_ONE_CONTENT_SQL = `
  UPDATE ${MESSAGES_SCHEMA}.message_contents SET raw = NULL, purged_at = now()
  WHERE message_id = $1 AND raw IS NOT NULL`;

/** The retention purges of messages and their contents (platform notes 3.4). */
@Injectable()
export class RetentionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Empties up to `limit` contents whose data retention ended; answers how many. */
  purgeDueContents(limit: number): Promise<number> {
    return this.purgeWith(PURGE_CONTENT_SQL, limit);
  }

  /** Deletes up to `limit` messages whose metadata retention ended; answers how many. */
  purgeExpiredMessages(limit: number): Promise<number> {
    return this.purgeWith(PURGE_METADATA_SQL, limit);
  }

  /** Empties one message's content now (data retention 0), in the caller's transaction. */
  async purgeContentNow(
    messageId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    await manager.query(PURGE_ONE_CONTENT_SQL, [messageId]);
  }

  private async purgeWith(sql: string, limit: number): Promise<number> {
    const rows = await this.dataSource.query<Array<{ purged: number }>>(sql, [limit]);
    return rows[0]?.purged ?? 0;
  }
}
