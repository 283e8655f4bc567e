import { preparedQuery } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { periodKey } from './billing-period';
import type { CountedReception } from './counted-reception';

/**
 * One statement per batch: the message ids new to their period's dedupe table are the ones
 * counted; their accounts' counters grow by that many, and last_activity_at moves forward (only
 * when it gains a minute or more, so that a busy account's row is not rewritten by every batch).
 */
const COUNT_RECEPTIONS_SQL = `
  WITH batch AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::date[], $4::timestamptz[])
      AS b(message_id, account_id, period_start, received_at)
  ), fresh AS (
    INSERT INTO accounts.counted_receptions (period_start, message_id)
    SELECT period_start, message_id FROM batch ORDER BY period_start, message_id
    ON CONFLICT DO NOTHING
    RETURNING period_start, message_id
  ), counted AS (
    SELECT b.account_id, b.period_start, count(*) AS receptions, max(b.received_at) AS latest
    FROM batch b JOIN fresh f USING (period_start, message_id)
    GROUP BY b.account_id, b.period_start
  ), counters AS (
    INSERT INTO accounts.reception_counts AS c (account_id, period_start, reception_count)
    SELECT account_id, period_start, receptions FROM counted ORDER BY account_id, period_start
    ON CONFLICT (account_id, period_start)
    DO UPDATE SET reception_count = c.reception_count + EXCLUDED.reception_count
  )
  UPDATE accounts.accounts a SET last_activity_at = activity.latest
  FROM (SELECT account_id, max(latest) AS latest FROM counted GROUP BY account_id) activity
  WHERE a.id = activity.account_id
    AND (a.last_activity_at IS NULL OR a.last_activity_at <= activity.latest - interval '1 minute')`;

const PURGE_ENDED_PERIODS_SQL = `
  WITH purged AS (
    DELETE FROM accounts.counted_receptions
    WHERE (period_start, message_id) IN (
      SELECT period_start, message_id FROM accounts.counted_receptions
      WHERE period_start < $1::date
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

const PERIOD_USAGE_SQL = `
  SELECT a.id, a.name, a.parent_account_id, a.deleted_at IS NOT NULL AS deleted,
    COALESCE(c.reception_count, 0)::text AS reception_count
  FROM accounts.accounts a
  LEFT JOIN accounts.reception_counts c ON c.account_id = a.id AND c.period_start = $2::date
  WHERE a.id = $1 OR a.parent_account_id = $1
  ORDER BY a.created_at, a.seq`;

/** An account's receptions in one period: the parent's own row or one of its children's. */
export interface AccountReceptions {
  accountId: string;
  name: string;
  /** Null for a top-level account. */
  parentAccountId: string | null;
  deleted: boolean;
  receptionCount: number;
}

/** The reception counters of the accounts schema and their dedupe table. */
@Injectable()
export class ReceptionCountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Counts the receptions whose message was not counted before, in one statement. */
  async count(receptions: readonly CountedReception[]): Promise<void> {
    const unique = [...new Map(receptions.map((r) => [r.messageId, r])).values()];
    if (unique.length === 0) return;
    await preparedQuery(this.dataSource.manager, COUNT_RECEPTIONS_SQL, [
      unique.map((r) => r.messageId),
      unique.map((r) => r.accountId),
      unique.map((r) => periodKey(r.receivedAt)),
      unique.map((r) => r.receivedAt.toISOString()),
    ]);
  }

  /** Deletes up to `limit` ids of periods that started before `before` (`YYYY-MM-01`). */
  async purgeBefore(before: string, limit: number): Promise<number> {
    const [row] = await this.dataSource.query<Array<{ purged: number }>>(PURGE_ENDED_PERIODS_SQL, [
      before,
      limit,
    ]);
    return row?.purged ?? 0;
  }

  /** The account (first) and its children, deleted or not, with their counts of the period. */
  async periodUsage(accountId: string, period: string): Promise<AccountReceptions[]> {
    const rows = await this.dataSource.query<
      Array<{
        id: string;
        name: string;
        parent_account_id: string | null;
        deleted: boolean;
        reception_count: string;
      }>
    >(PERIOD_USAGE_SQL, [accountId, period]);
    return rows.map((row) => ({
      accountId: row.id,
      name: row.name,
      parentAccountId: row.parent_account_id,
      deleted: row.deleted,
      receptionCount: Number(row.reception_count),
    }));
  }
}
