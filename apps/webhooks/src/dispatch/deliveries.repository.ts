import {
  WEBHOOK_EVENT_FLAGS,
  type WebhookEventFlag,
  WebhooksStreamSubjects,
} from '@envoi/contracts-webhooks';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { WEBHOOKS_SCHEMA } from '../database/data-source-options';
import { updatedRows } from '../database/updated-rows';
import type { DeliveryState } from './webhook-delivery.entity';

/** Who an event is for: its account, its domain (null: global webhooks only), its flag. */
export interface SubscriptionKey {
  accountId: string;
  domain: string | null;
  flag: WebhookEventFlag;
}

/** A webhook subscribed to the key at `index` of the request. */
export interface Subscriber {
  index: number;
  webhookId: string;
  /** It has a URL to deliver to (a temporary stream webhook has none). */
  endpoint: boolean;
  /** Its events are also buffered for a stream listener. */
  streamed: boolean;
}

export interface NewDelivery {
  id: string;
  webhookId: string;
  accountId: string;
  eventId: string;
  eventType: string;
  body: string;
}

/** A delivery this replica holds until `leaseUntil`, with what its call needs. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  body: string;
  /** Attempts recorded before this one. */
  attempts: number;
  leaseToken: string;
  url: string;
  secretCiphertext: string;
}

export interface ClaimLimits {
  /** Deliveries in flight per webhook at most, those of every replica counted. */
  perWebhook: number;
  /** Deliveries claimed by this call at most. */
  limit: number;
  leaseMs: number;
}

/** An attempt's result, recorded with the delivery's new state and the webhook's counters. */
export interface AttemptRecord {
  deliveryId: string;
  leaseToken: string;
  state: DeliveryState;
  /** When the next attempt is due; null when this one settled the delivery. */
  nextAttemptAt: Date | null;
  attemptedAt: Date;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string;
  succeeded: boolean;
  /** Disables the webhook at once (410 Gone). */
  gone: boolean;
  /** Consecutive failures that disable the webhook. */
  disableAfterFailures: number;
}

export interface RecordedAttempt {
  /** The webhook's `enabled` after the attempt. */
  webhookEnabled: boolean;
}

const S = WEBHOOKS_SCHEMA;

const DISABLED_SUBJECT = WebhooksStreamSubjects.webhookDisabled;

/** `w.<flag>` for the flag named by `$name` (only the ten known column names appear). */
const flagColumn = (name: string): string =>
  `CASE ${name} ${WEBHOOK_EVENT_FLAGS.map((flag) => `WHEN '${flag}' THEN w.${flag}`).join(' ')} ELSE false END`;

const SUBSCRIBERS_SQL = `
  SELECT k.idx::int - 1 AS index, w.id AS webhook_id, w.url <> '' AS endpoint, w.streamed
  FROM unnest($1::uuid[], $2::varchar[], $3::varchar[]) WITH ORDINALITY AS k(account_id, domain, flag, idx)
  JOIN ${S}.webhooks w ON w.account_id = k.account_id AND w.enabled AND ${flagColumn('k.flag')}
  WHERE w.scope = 'global'
     OR EXISTS (SELECT 1 FROM ${S}.webhook_domains d WHERE d.webhook_id = w.id AND d.domain = k.domain)`;

const INSERT_SQL = `
  INSERT INTO ${S}.webhook_deliveries (id, webhook_id, account_id, event_id, event_type, body, next_attempt_at)
  SELECT u.*, now()
  FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::varchar[], $5::varchar[], $6::text[]) AS u
  ON CONFLICT (event_id, webhook_id) DO NOTHING`;

/**
 * Due deliveries of enabled webhooks, round-robin across webhooks (each one's oldest first), a
 * webhook's share cut to its free places ($1, or 1 while its last call failed, less those leased
 * now: a dead endpoint holds one place until it answers again); locked rows are skipped and
 * re-checked after locking, so two replicas never claim one delivery. It reads no more than it
 * takes: the webhooks with pending deliveries are found by skipping through the pending index
 * one webhook at a time, and each one's leased and due deliveries through their indexes.
 */
const CLAIM_SQL = `
  WITH RECURSIVE hooks AS (
    (SELECT webhook_id FROM ${S}.webhook_deliveries WHERE state = 'pending'
     ORDER BY webhook_id LIMIT 1)
    UNION ALL
    SELECT (SELECT d.webhook_id FROM ${S}.webhook_deliveries d
            WHERE d.state = 'pending' AND d.webhook_id > hooks.webhook_id
            ORDER BY d.webhook_id LIMIT 1)
    FROM hooks WHERE hooks.webhook_id IS NOT NULL
  ), places AS (
    SELECT w.id AS webhook_id,
      CASE WHEN w.errors_since_last_success > 0 THEN 1 ELSE $1 END - (
        SELECT count(*)::int FROM ${S}.webhook_deliveries b
        WHERE b.webhook_id = w.id AND b.state = 'pending' AND b.lease_until IS NOT NULL
          AND b.lease_until > now()
      ) AS free
    FROM hooks JOIN ${S}.webhooks w ON w.id = hooks.webhook_id AND w.enabled
  ), picked AS (
    SELECT due.id FROM places
    CROSS JOIN LATERAL (
      SELECT d.id, row_number() OVER (ORDER BY d.next_attempt_at, d.seq) AS rank
      FROM ${S}.webhook_deliveries d
      WHERE d.webhook_id = places.webhook_id AND d.state = 'pending'
        AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until <= now())
      ORDER BY d.next_attempt_at, d.seq
      LIMIT greatest(places.free, 0)
    ) due
    ORDER BY due.rank
    LIMIT $2
  ), locked AS (
    SELECT d.id FROM ${S}.webhook_deliveries d
    WHERE d.id IN (SELECT id FROM picked) AND d.state = 'pending'
      AND (d.lease_until IS NULL OR d.lease_until <= now())
    FOR UPDATE SKIP LOCKED
  )
  UPDATE ${S}.webhook_deliveries d
  SET lease_until = now() + make_interval(secs => $3::double precision / 1000),
      lease_token = gen_random_uuid()
  FROM locked, ${S}.webhooks w
  WHERE d.id = locked.id AND w.id = d.webhook_id
  RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.body, d.attempts, d.lease_token,
    w.url, w.secret_ciphertext`;

/**
 * One statement: the delivery's new state (only while the caller still holds its lease), the
 * attempt's row, and the webhook's counters, disabled on 410 or too many consecutive failures.
 * A webhook it disables gets a `webhook.disabled` event in the outbox, in that same statement.
 */
const RECORD_SQL = `
  WITH settled AS (
    UPDATE ${S}.webhook_deliveries
    SET state = $3, attempts = attempts + 1, next_attempt_at = coalesce($4, next_attempt_at),
        lease_until = NULL, lease_token = NULL, updated_at = now()
    WHERE id = $1 AND lease_token = $2
    RETURNING id, webhook_id, event_id, event_type, attempts
  ), attempt AS (
    INSERT INTO ${S}.webhook_attempts (delivery_id, webhook_id, event_id, event_type, attempt,
      attempted_at, response_status, error, duration_ms, response_body, next_retry_at)
    SELECT id, webhook_id, event_id, event_type, attempts, $5, $6, $7, $8, $9, $4 FROM settled
  ), counted AS (
    SELECT w.id, w.enabled AS was_enabled,
      (NOT $10::boolean AND w.errors_since_last_success + 1 >= $12::int) OR $11::boolean AS disable
    FROM ${S}.webhooks w JOIN settled ON settled.webhook_id = w.id
  ), updated AS (
    UPDATE ${S}.webhooks w
    SET success_count = w.success_count + CASE WHEN $10 THEN 1 ELSE 0 END,
        error_count = w.error_count + CASE WHEN $10 THEN 0 ELSE 1 END,
        errors_since_last_success = CASE WHEN $10 THEN 0 ELSE w.errors_since_last_success + 1 END,
        last_request_at = $5,
        enabled = w.enabled AND NOT counted.disable,
        disabled_reason = CASE
          WHEN NOT (w.enabled AND counted.disable) THEN w.disabled_reason
          WHEN $11 THEN 'the endpoint answered 410 Gone'
          ELSE 'too many consecutive failed calls' END
    FROM counted WHERE w.id = counted.id
    RETURNING w.id, w.account_id, w.name, w.url, w.enabled, w.errors_since_last_success,
      counted.was_enabled AND counted.disable AS disabled_now
  ), disabled AS (
    SELECT gen_random_uuid() AS event_id, updated.* FROM updated WHERE disabled_now
  ), notice AS (
    INSERT INTO ${S}.outbox (id, stream, subject, payload)
    SELECT event_id, $13, $14, jsonb_build_object(
      'id', event_id, 'type', 'webhook.disabled', 'timestamp', $15::text,
      'data', jsonb_build_object(
        'account_id', account_id, 'webhook_id', id, 'name', name, 'url', url,
        'reason', CASE WHEN $11 THEN 'gone' ELSE 'consecutive_failures' END,
        'consecutive_failures', errors_since_last_success,
        'last_status', $6::int, 'disabled_at', $15::text))
    FROM disabled
  )
  SELECT enabled FROM updated`;

const PURGE_SQL = `
  WITH purged AS (
    DELETE FROM ${S}.webhook_deliveries
    WHERE id IN (
      SELECT id FROM ${S}.webhook_deliveries
      WHERE state <> 'pending'
        AND updated_at <= now() - make_interval(secs => $2::double precision / 1000)
      ORDER BY updated_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

interface ClaimRow {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  body: string;
  attempts: number;
  lease_token: string;
  url: string;
  secret_ciphertext: string;
}

/** The deliveries and their attempts (schema "webhooks"). */
@Injectable()
export class DeliveriesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The enabled webhooks subscribed to each key, in one statement. */
  async findSubscribers(
    keys: readonly SubscriptionKey[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Subscriber[]> {
    if (keys.length === 0) return [];
    const rows = await manager.query<
      Array<{ index: number; webhook_id: string; endpoint: boolean; streamed: boolean }>
    >(SUBSCRIBERS_SQL, [
      keys.map((key) => key.accountId),
      keys.map((key) => key.domain),
      keys.map((key) => key.flag),
    ]);
    return rows.map((row) => ({
      index: row.index,
      webhookId: row.webhook_id,
      endpoint: row.endpoint,
      streamed: row.streamed,
    }));
  }

  /** Inserts the deliveries, due now; a pair (event, webhook) already there is left alone. */
  async insert(
    deliveries: readonly NewDelivery[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    if (deliveries.length === 0) return;
    await manager.query(INSERT_SQL, [
      deliveries.map((delivery) => delivery.id),
      deliveries.map((delivery) => delivery.webhookId),
      deliveries.map((delivery) => delivery.accountId),
      deliveries.map((delivery) => delivery.eventId),
      deliveries.map((delivery) => delivery.eventType),
      deliveries.map((delivery) => delivery.body),
    ]);
  }

  async claimDue(limits: ClaimLimits): Promise<ClaimedDelivery[]> {
    if (limits.limit <= 0) return [];
    const result = await this.dataSource.query<unknown>(CLAIM_SQL, [
      limits.perWebhook,
      limits.limit,
      limits.leaseMs,
    ]);
    return updatedRows<ClaimRow>(result).map((row) => ({
      id: row.id,
      webhookId: row.webhook_id,
      eventId: row.event_id,
      eventType: row.event_type,
      body: row.body,
      attempts: row.attempts,
      leaseToken: row.lease_token,
      url: row.url,
      secretCiphertext: row.secret_ciphertext,
    }));
  }

  /** Records the attempt; null when the lease was lost (another replica took the delivery over). */
  async recordAttempt(record: AttemptRecord): Promise<RecordedAttempt | null> {
    const result = await this.dataSource.query<Array<{ enabled: boolean }>>(RECORD_SQL, [
      record.deliveryId,
      record.leaseToken,
      record.state,
      record.nextAttemptAt,
      record.attemptedAt,
      record.responseStatus,
      record.error,
      record.durationMs,
      record.responseBody,
      record.succeeded,
      record.gone,
      record.disableAfterFailures,
      DISABLED_SUBJECT.stream,
      DISABLED_SUBJECT.name,
      record.attemptedAt.toISOString(),
    ]);
    const [row] = result;
    return row ? { webhookEnabled: row.enabled } : null;
  }

  /**
   * Deletes up to `limit` settled deliveries (with their attempts) last touched more than
   * `olderThanMs` ago; answers how many.
   */
  async purgeSettled(olderThanMs: number, limit: number): Promise<number> {
    const [row] = await this.dataSource.query<Array<{ purged: number }>>(PURGE_SQL, [
      limit,
      olderThanMs,
    ]);
    return row?.purged ?? 0;
  }
}
