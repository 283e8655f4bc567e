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

/** What a purged send keeps: nothing its messages could be composed from. */
const SEND_CONTENT_PURGED = `subject = NULL, text_content = NULL, html_content = NULL,
  amp_content = NULL, headers = NULL, substitutions = NULL, reply_to = NULL, to_addresses = NULL,
  cc_addresses = NULL, raw_content = NULL, purged_at = now()`;

/**
 * Data retention of sends (all their messages share it): empties up to $1 sends whose time has
 * come, earliest first, with their attachments and their recipients' substitutions.
 */
const PURGE_SEND_CONTENT_SQL = `
  WITH due AS (
    SELECT id FROM ${MESSAGES_SCHEMA}.sends
    WHERE purged_at IS NULL AND purge_at <= now()
    ORDER BY purge_at
    LIMIT $1
    FOR UPDATE SKIP LOCKED
  ), attachments AS (
    DELETE FROM ${MESSAGES_SCHEMA}.send_attachments WHERE send_id IN (SELECT id FROM due)
  ), substitutions AS (
    UPDATE ${MESSAGES_SCHEMA}.messages SET substitutions = NULL
    WHERE send_id IN (SELECT id FROM due) AND substitutions IS NOT NULL
  ), purged AS (
    UPDATE ${MESSAGES_SCHEMA}.sends SET ${SEND_CONTENT_PURGED}
    WHERE id IN (SELECT id FROM due)
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

/** Metadata retention: deletes up to $1 rows of the table past `retain_until`, earliest first. */
function purgeExpiredSql(table: string): string {
  return `
  WITH purged AS (
    DELETE FROM ${MESSAGES_SCHEMA}.${table}
    WHERE id IN (
      SELECT id FROM ${MESSAGES_SCHEMA}.${table}
      WHERE retain_until <= now()
      ORDER BY retain_until
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;
}

/** Messages (their contents and links cascade). */
const PURGE_METADATA_SQL = purgeExpiredSql('messages');
/** Sends (their messages, attachments and links cascade). */
const PURGE_SENDS_SQL = purgeExpiredSql('sends');

/**
 * Data retention 0 ("deleted right after processing", platform notes 3.4): empties the
 * messages' contents at once, inside the caller's transaction (the one that made their status
 * final): a stored raw content is emptied, a message of a send is marked purged (it reads back
 * without content from then on) and its substitutions dropped. Answers the sends concerned.
 */
const PURGE_CONTENTS_NOW_SQL = `
  WITH raw AS (
    UPDATE ${MESSAGES_SCHEMA}.message_contents SET raw = NULL, purged_at = now()
    WHERE message_id = ANY($1::uuid[]) AND raw IS NOT NULL
  ), marked AS (
    UPDATE ${MESSAGES_SCHEMA}.messages SET content_purged_at = now(), substitutions = NULL
    WHERE id = ANY($1::uuid[]) AND send_id IS NOT NULL AND content_purged_at IS NULL
    RETURNING send_id
  )
  SELECT DISTINCT send_id FROM marked ORDER BY send_id`;

/**
 * The sends among $1 none of whose messages can still be read: emptied. The caller locked them
 * first (in id order), so that of two transactions purging a send's last messages, the later
 * one sees the earlier one's and purges the send.
 */
const PURGE_FINISHED_SENDS_SQL = `
  WITH finished AS (
    SELECT id FROM ${MESSAGES_SCHEMA}.sends AS send
    WHERE id = ANY($1::uuid[]) AND purged_at IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM ${MESSAGES_SCHEMA}.messages AS message
        WHERE message.send_id = send.id AND message.content_purged_at IS NULL
      )
  ), attachments AS (
    DELETE FROM ${MESSAGES_SCHEMA}.send_attachments WHERE send_id IN (SELECT id FROM finished)
  )
  UPDATE ${MESSAGES_SCHEMA}.sends SET ${SEND_CONTENT_PURGED}
  WHERE id IN (SELECT id FROM finished)`;

const LOCK_SENDS_SQL = `
  SELECT id FROM ${MESSAGES_SCHEMA}.sends WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`;

/** The retention purges of messages and their contents (platform notes 3.4). */
@Injectable()
export class RetentionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Empties up to `limit` stored raw contents whose data retention ended; answers how many. */
  purgeDueContents(limit: number): Promise<number> {
    return this.purgeWith(PURGE_CONTENT_SQL, limit);
  }

  /** Empties up to `limit` sends whose data retention ended; answers how many. */
  purgeDueSends(limit: number): Promise<number> {
    return this.purgeWith(PURGE_SEND_CONTENT_SQL, limit);
  }

  /** Deletes up to `limit` messages whose metadata retention ended; answers how many. */
  purgeExpiredMessages(limit: number): Promise<number> {
    return this.purgeWith(PURGE_METADATA_SQL, limit);
  }

  /** Deletes up to `limit` sends whose metadata retention ended; answers how many. */
  purgeExpiredSends(limit: number): Promise<number> {
    return this.purgeWith(PURGE_SENDS_SQL, limit);
  }

  /** Empties one message's content now (data retention 0), in the caller's transaction. */
  purgeContentNow(messageId: string, manager?: EntityManager): Promise<void> {
    return this.purgeContentsNow([messageId], manager);
  }

  /**
   * Empties these messages' contents now (data retention 0), in the caller's transaction, and
   * the content of each send none of whose messages can be read any more.
   */
  async purgeContentsNow(
    messageIds: readonly string[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    if (messageIds.length === 0) return;
    const sends = await manager.query<Array<{ send_id: string }>>(PURGE_CONTENTS_NOW_SQL, [
      messageIds,
    ]);
    await this.purgeFinishedSends(
      sends.map((row) => row.send_id),
      manager,
    );
  }

  /** Empties those of the sends none of whose messages can be read any more. */
  async purgeFinishedSends(
    sendIds: readonly string[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    if (sendIds.length === 0) return;
    await manager.query(LOCK_SENDS_SQL, [sendIds]);
    await manager.query(PURGE_FINISHED_SENDS_SQL, [sendIds]);
  }

  private async purgeWith(sql: string, limit: number): Promise<number> {
    const rows = await this.dataSource.query<Array<{ purged: number }>>(sql, [limit]);
    return rows[0]?.purged ?? 0;
  }
}
