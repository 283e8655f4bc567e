import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { WEBHOOKS_SCHEMA } from '../database/data-source-options';
import { updatedRows } from '../database/updated-rows';

const S = WEBHOOKS_SCHEMA;

/** An event to buffer for a webhook's stream listener. */
export interface NewStreamEvent {
  webhookId: string;
  eventId: string;
  eventType: string;
  body: string;
}

export interface StoredStreamEvent extends NewStreamEvent {
  seq: number;
  createdAt: Date;
}

/** What an attach found: attached (with the last buffered seq), another listener, no webhook. */
export type AttachResult =
  { attached: true; replayUntilSeq: number } | { attached: false; reason: 'busy' | 'not_found' };

const APPEND_SQL = `
  INSERT INTO ${S}.webhook_stream_events (webhook_id, event_id, event_type, body)
  SELECT * FROM unnest($1::uuid[], $2::varchar[], $3::varchar[], $4::text[])
  ON CONFLICT (webhook_id, event_id) DO NOTHING
  RETURNING webhook_id`;

/** Keeps each listed webhook's newest $2 events. */
const TRIM_SQL = `
  DELETE FROM ${S}.webhook_stream_events e
  USING (
    SELECT w.id, (
      SELECT seq FROM ${S}.webhook_stream_events
      WHERE webhook_id = w.id ORDER BY seq DESC OFFSET $2 LIMIT 1
    ) AS last_dropped
    FROM unnest($1::uuid[]) AS w(id)
  ) cut
  WHERE e.webhook_id = cut.id AND e.seq <= cut.last_dropped`;

/**
 * Attaches `$3` unless another listener holds an unexpired attachment (`$4` force replaces it);
 * the webhook must be a streamed one of the account.
 */
const ATTACH_SQL = `
  UPDATE ${S}.webhooks
  SET stream_session_id = $3,
      stream_lease_until = now() + make_interval(secs => $5::double precision / 1000),
      stream_used_at = now()
  WHERE id = $1 AND account_id = $2 AND streamed
    AND ($4::boolean OR stream_session_id IS NULL OR stream_session_id = $3
      OR stream_lease_until <= now())
  RETURNING (SELECT coalesce(max(seq), 0) FROM ${S}.webhook_stream_events WHERE webhook_id = $1)::text
    AS replay_until_seq`;

const RENEW_SQL = `
  UPDATE ${S}.webhooks
  SET stream_lease_until = now() + make_interval(secs => $3::double precision / 1000),
      stream_used_at = now()
  WHERE id = $1 AND stream_session_id = $2
  RETURNING id`;

const DETACH_SQL = `
  UPDATE ${S}.webhooks
  SET stream_session_id = NULL, stream_lease_until = NULL, stream_used_at = now()
  WHERE id = $1 AND stream_session_id = $2
  RETURNING id`;

const IS_ATTACHED_SQL = `
  SELECT 1 FROM ${S}.webhooks WHERE id = $1 AND stream_session_id = $2`;

/** Temporary webhooks without a listener, unused for $1 ms ($2 at most). */
const PURGE_TEMPORARY_SQL = `
  WITH purged AS (
    DELETE FROM ${S}.webhooks WHERE id IN (
      SELECT id FROM ${S}.webhooks
      WHERE temporary
        AND (stream_lease_until IS NULL OR stream_lease_until <= now())
        AND coalesce(stream_used_at, created_at) <= now() - make_interval(secs => $1::double precision / 1000)
      LIMIT $2
      FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

const PURGE_AGED_SQL = `
  WITH purged AS (
    DELETE FROM ${S}.webhook_stream_events WHERE seq IN (
      SELECT seq FROM ${S}.webhook_stream_events
      WHERE created_at <= now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY created_at
      LIMIT $2
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

interface StreamEventRow {
  seq: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  body: string;
  created_at: Date;
}

/** The stream buffer (webhooks.webhook_stream_events) and the listener attachment of a webhook. */
@Injectable()
export class StreamEventsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Buffers the events (an event already buffered for a webhook is left alone), then trims each
   * webhook touched to its newest `keep`; answers the webhooks that got a new event.
   */
  async append(events: readonly NewStreamEvent[], keep: number): Promise<string[]> {
    if (events.length === 0) return [];
    const rows = await this.dataSource.query<Array<{ webhook_id: string }>>(APPEND_SQL, [
      events.map((event) => event.webhookId),
      events.map((event) => event.eventId),
      events.map((event) => event.eventType),
      events.map((event) => event.body),
    ]);
    const webhookIds = [...new Set(rows.map((row) => row.webhook_id))];
    if (webhookIds.length > 0) await this.dataSource.query(TRIM_SQL, [webhookIds, keep]);
    return webhookIds;
  }

  /** The webhook's buffered events after `afterSeq`, oldest first. */
  async read(webhookId: string, afterSeq: number, limit: number): Promise<StoredStreamEvent[]> {
    const rows = await this.dataSource.query<StreamEventRow[]>(
      `SELECT seq::text, webhook_id, event_id, event_type, body, created_at
       FROM ${S}.webhook_stream_events WHERE webhook_id = $1 AND seq > $2
       ORDER BY seq LIMIT $3`,
      [webhookId, afterSeq, limit],
    );
    return rows.map((row) => ({
      seq: Number(row.seq),
      webhookId: row.webhook_id,
      eventId: row.event_id,
      eventType: row.event_type,
      body: row.body,
      createdAt: row.created_at,
    }));
  }

  /** Removes the webhook's events up to `seq` (written to its listener). */
  async removeUpTo(webhookId: string, seq: number): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM ${S}.webhook_stream_events WHERE webhook_id = $1 AND seq <= $2`,
      [webhookId, seq],
    );
  }

  async attach(
    accountId: string,
    webhookId: string,
    sessionId: string,
    force: boolean,
    leaseMs: number,
  ): Promise<AttachResult> {
    const result = await this.dataSource.query<unknown>(ATTACH_SQL, [
      webhookId,
      accountId,
      sessionId,
      force,
      leaseMs,
    ]);
    const [row] = updatedRows<{ replay_until_seq: string }>(result);
    if (row) return { attached: true, replayUntilSeq: Number(row.replay_until_seq) };
    const exists = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM ${S}.webhooks WHERE id = $1 AND account_id = $2 AND streamed`,
      [webhookId, accountId],
    );
    return { attached: false, reason: exists.length > 0 ? 'busy' : 'not_found' };
  }

  /** Extends the listener's attachment; false when it is no longer the attached one. */
  async renew(webhookId: string, sessionId: string, leaseMs: number): Promise<boolean> {
    const result = await this.dataSource.query<unknown>(RENEW_SQL, [webhookId, sessionId, leaseMs]);
    return updatedRows(result).length > 0;
  }

  async detach(webhookId: string, sessionId: string): Promise<boolean> {
    const result = await this.dataSource.query<unknown>(DETACH_SQL, [webhookId, sessionId]);
    return updatedRows(result).length > 0;
  }

  async isAttached(webhookId: string, sessionId: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(IS_ATTACHED_SQL, [webhookId, sessionId]);
    return rows.length > 0;
  }

  /** Marks the webhook streamed (its events are buffered from now on). */
  async markStreamed(webhookId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE ${S}.webhooks SET streamed = true, stream_used_at = now() WHERE id = $1`,
      [webhookId],
    );
  }

  /** Deletes up to `limit` idle temporary webhooks (their buffers go with them); answers how many. */
  async purgeIdleTemporary(idleMs: number, limit: number): Promise<number> {
    const [row] = await this.dataSource.query<Array<{ purged: number }>>(PURGE_TEMPORARY_SQL, [
      idleMs,
      limit,
    ]);
    return row?.purged ?? 0;
  }

  /** Deletes up to `limit` events buffered more than `maxAgeMs` ago; answers how many. */
  async purgeAged(maxAgeMs: number, limit: number): Promise<number> {
    const [row] = await this.dataSource.query<Array<{ purged: number }>>(PURGE_AGED_SQL, [
      maxAgeMs,
      limit,
    ]);
    return row?.purged ?? 0;
  }
}
