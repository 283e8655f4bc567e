import { type PurgeBounds, purgeInBatches } from '@envoi/shared-database';
import type { DataSource } from 'typeorm';

/**
 * Where a service keeps its listener streams. The targets table (webhooks, routes) has `id`,
 * `account_id`, `created_at` and the stream columns `temporary`, `streamed`, `stream_session_id`,
 * `stream_lease_until`, `stream_used_at`; the events table has `seq` (identity), the target
 * column, `event_id`, `event_type`, `body` and `created_at`, unique on (target, event_id).
 */
export interface ListenerStreamTables {
  schema: string;
  targets: string;
  events: string;
  /** The events table's column naming the target (`webhook_id`, `route_id`). */
  targetColumn: string;
}

/** An event to buffer for a target's stream listener. */
export interface NewStreamEvent {
  targetId: string;
  eventId: string;
  eventType: string;
  body: string;
}

export interface StoredStreamEvent extends NewStreamEvent {
  seq: number;
  createdAt: Date;
}

/** What an attach found: attached (with the last buffered seq), another listener, no target. */
export type AttachResult =
  { attached: true; replayUntilSeq: number } | { attached: false; reason: 'busy' | 'not_found' };

interface StreamEventRow {
  seq: string;
  target_id: string;
  event_id: string;
  event_type: string;
  body: string;
  created_at: Date;
}

/** The rows of an UPDATE … RETURNING, which TypeORM answers as `[rows, affected]`. */
function updatedRows<T>(result: unknown): T[] {
  if (Array.isArray(result) && Array.isArray(result[0])) return result[0] as T[];
  return Array.isArray(result) ? (result as T[]) : [];
}

/** The statements of one service's listener streams, on its tables. */
function statements({ schema, targets, events, targetColumn: target }: ListenerStreamTables) {
  const T = `${schema}.${targets}`;
  const E = `${schema}.${events}`;
  return {
    append: `
      INSERT INTO ${E} (${target}, event_id, event_type, body)
      SELECT * FROM unnest($1::uuid[], $2::varchar[], $3::varchar[], $4::text[])
      ON CONFLICT (${target}, event_id) DO NOTHING
      RETURNING ${target} AS target_id`,
    /** Keeps each listed target's newest $2 events. */
    trim: `
      DELETE FROM ${E} e
      USING (
        SELECT t.id, (
          SELECT seq FROM ${E} WHERE ${target} = t.id ORDER BY seq DESC OFFSET $2 LIMIT 1
        ) AS last_dropped
        FROM unnest($1::uuid[]) AS t(id)
      ) cut
      WHERE e.${target} = cut.id AND e.seq <= cut.last_dropped`,
    read: `
      SELECT seq::text, ${target} AS target_id, event_id, event_type, body, created_at
      FROM ${E} WHERE ${target} = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    removeUpTo: `DELETE FROM ${E} WHERE ${target} = $1 AND seq <= $2`,
    /**
     * Attaches `$3` unless another listener holds an unexpired attachment (`$4` force replaces
     * it); the target must be a streamed one of the account.
     */
    attach: `
      UPDATE ${T}
      SET stream_session_id = $3,
          stream_lease_until = now() + make_interval(secs => $5::double precision / 1000),
          stream_used_at = now()
      WHERE id = $1 AND account_id = $2 AND streamed
        AND ($4::boolean OR stream_session_id IS NULL OR stream_session_id = $3
          OR stream_lease_until <= now())
      RETURNING (SELECT coalesce(max(seq), 0) FROM ${E} WHERE ${target} = $1)::text
        AS replay_until_seq`,
    exists: `SELECT 1 FROM ${T} WHERE id = $1 AND account_id = $2 AND streamed`,
    renew: `
      UPDATE ${T}
      SET stream_lease_until = now() + make_interval(secs => $3::double precision / 1000),
          stream_used_at = now()
      WHERE id = $1 AND stream_session_id = $2
      RETURNING id`,
    detach: `
      UPDATE ${T}
      SET stream_session_id = NULL, stream_lease_until = NULL, stream_used_at = now()
      WHERE id = $1 AND stream_session_id = $2
      RETURNING id`,
    isAttached: `SELECT 1 FROM ${T} WHERE id = $1 AND stream_session_id = $2`,
    markStreamed: `UPDATE ${T} SET streamed = true, stream_used_at = now() WHERE id = $1`,
    /** Temporary targets without a listener, unused for $1 ms ($2 at most). */
    purgeTemporary: `
      WITH purged AS (
        DELETE FROM ${T} WHERE id IN (
          SELECT id FROM ${T}
          WHERE temporary
            AND (stream_lease_until IS NULL OR stream_lease_until <= now())
            AND coalesce(stream_used_at, created_at)
              <= now() - make_interval(secs => $1::double precision / 1000)
          LIMIT $2
          FOR UPDATE SKIP LOCKED
        )
        RETURNING 1
      )
      SELECT count(*)::int AS purged FROM purged`,
    purgeAged: `
      WITH purged AS (
        DELETE FROM ${E} WHERE seq IN (
          SELECT seq FROM ${E}
          WHERE created_at <= now() - make_interval(secs => $1::double precision / 1000)
          ORDER BY created_at
          LIMIT $2
        )
        RETURNING 1
      )
      SELECT count(*)::int AS purged FROM purged`,
  };
}

/**
 * A service's stream buffers and the listener attachment (a lease on the target's row: one
 * listener per target over every replica).
 */
export class ListenerStreamStore {
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    private readonly dataSource: DataSource,
    tables: ListenerStreamTables,
  ) {
    this.sql = statements(tables);
  }

  /**
   * Buffers the events (an event already buffered for a target is left alone), then trims each
   * target touched to its newest `keep`; answers the targets that got a new event.
   */
  async append(events: readonly NewStreamEvent[], keep: number): Promise<string[]> {
    if (events.length === 0) return [];
    const rows = await this.dataSource.query<Array<{ target_id: string }>>(this.sql.append, [
      events.map((event) => event.targetId),
      events.map((event) => event.eventId),
      events.map((event) => event.eventType),
      events.map((event) => event.body),
    ]);
    const targetIds = [...new Set(rows.map((row) => row.target_id))];
    if (targetIds.length > 0) await this.dataSource.query(this.sql.trim, [targetIds, keep]);
    return targetIds;
  }

  /** The target's buffered events after `afterSeq`, oldest first. */
  async read(targetId: string, afterSeq: number, limit: number): Promise<StoredStreamEvent[]> {
    const rows = await this.dataSource.query<StreamEventRow[]>(this.sql.read, [
      targetId,
      afterSeq,
      limit,
    ]);
    return rows.map((row) => ({
      seq: Number(row.seq),
      targetId: row.target_id,
      eventId: row.event_id,
      eventType: row.event_type,
      body: row.body,
      createdAt: row.created_at,
    }));
  }

  /** Removes the target's events up to `seq` (written to its listener). */
  async removeUpTo(targetId: string, seq: number): Promise<void> {
    await this.dataSource.query(this.sql.removeUpTo, [targetId, seq]);
  }

  async attach(
    accountId: string,
    targetId: string,
    sessionId: string,
    force: boolean,
    leaseMs: number,
  ): Promise<AttachResult> {
    const result = await this.dataSource.query<unknown>(this.sql.attach, [
      targetId,
      accountId,
      sessionId,
      force,
      leaseMs,
    ]);
    const [row] = updatedRows<{ replay_until_seq: string }>(result);
    if (row) return { attached: true, replayUntilSeq: Number(row.replay_until_seq) };
    const exists = await this.dataSource.query<unknown[]>(this.sql.exists, [targetId, accountId]);
    return { attached: false, reason: exists.length > 0 ? 'busy' : 'not_found' };
  }

  /** Extends the listener's attachment; false when it is no longer the attached one. */
  async renew(targetId: string, sessionId: string, leaseMs: number): Promise<boolean> {
    const result = await this.dataSource.query<unknown>(this.sql.renew, [
      targetId,
      sessionId,
      leaseMs,
    ]);
    return updatedRows(result).length > 0;
  }

  async detach(targetId: string, sessionId: string): Promise<boolean> {
    const result = await this.dataSource.query<unknown>(this.sql.detach, [targetId, sessionId]);
    return updatedRows(result).length > 0;
  }

  async isAttached(targetId: string, sessionId: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(this.sql.isAttached, [targetId, sessionId]);
    return rows.length > 0;
  }

  /** Marks the target streamed (its events are buffered from now on). */
  async markStreamed(targetId: string): Promise<void> {
    await this.dataSource.query(this.sql.markStreamed, [targetId]);
  }

  /** Deletes up to `limit` idle temporary targets (their buffers go with them); answers how many. */
  async purgeIdleTemporary(idleMs: number, limit: number): Promise<number> {
    return this.count(this.sql.purgeTemporary, idleMs, limit);
  }

  /** Deletes up to `limit` events buffered more than `maxAgeMs` ago; answers how many. */
  async purgeAged(maxAgeMs: number, limit: number): Promise<number> {
    return this.count(this.sql.purgeAged, maxAgeMs, limit);
  }

  /**
   * One bounded purge run: idle temporary targets (unused for `temporaryTtlMs`, no listener),
   * then events buffered more than `bufferMaxAgeMs` ago; answers how many of each went.
   */
  async purge(
    retention: { temporaryTtlMs: number; bufferMaxAgeMs: number },
    bounds: PurgeBounds,
  ): Promise<{ targets: number; events: number }> {
    const { batchSize } = bounds;
    const targets = await purgeInBatches(
      () => this.purgeIdleTemporary(retention.temporaryTtlMs, batchSize),
      bounds,
    );
    const events = await purgeInBatches(
      () => this.purgeAged(retention.bufferMaxAgeMs, batchSize),
      bounds,
    );
    return { targets, events };
  }

  private async count(sql: string, ageMs: number, limit: number): Promise<number> {
    const [row] = await this.dataSource.query<Array<{ purged: number }>>(sql, [ageMs, limit]);
    return row?.purged ?? 0;
  }
}
