import { randomUUID } from 'node:crypto';

import {
  WEBHOOK_EVENT_FLAGS,
  type WebhookDisabledEvent,
  type WebhookEventFlag,
  WebhooksStreamSubjects,
} from '@envoi/contracts-webhooks';
import { preparedQuery } from '@envoi/shared-database';
import {
  type CountedAttempt,
  countersAddedTo,
  type DisablingAttempt,
} from '@envoi/shared-outbound';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { WEBHOOKS_SCHEMA } from '../database/data-source-options';
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
  /** Its webhook's last call failed. */
  webhookFailing: boolean;
}

export interface ClaimLimits {
  /** Deliveries leased per webhook at most, those of every replica counted. */
  perWebhook: number;
  /** The webhooks whose deliveries the caller holds leases of. */
  held: readonly string[];
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
}

export interface RecordedAttempt {
  /** The webhook's `enabled` after the attempt. */
  webhookEnabled: boolean;
  /** The webhook's account. */
  accountId: string;
}

/** A call made before its delivery was stored (the fan-out's first attempt), and its result. */
export type FirstAttempt = NewDelivery & Omit<AttemptRecord, 'deliveryId' | 'leaseToken'>;

/** What one fan-out batch stores of its deliveries to endpoints. */
export interface FanOutRecords {
  /** Called, with their results: stored with their first attempt. */
  attempted: readonly FirstAttempt[];
  /** Not called: stored due now, for a claim. */
  unsent: readonly NewDelivery[];
  /** Still being called: stored leased to the caller, who records the attempt later. */
  leased: readonly NewDelivery[];
  leaseMs: number;
}

/** What a fan-out batch stored: its attempts recorded, and the leases of its calls still running. */
export interface StoredFanOut {
  recorded: Map<string, RecordedAttempt>;
  /** Lease tokens by delivery id (a delivery stored before is not leased again). */
  leaseTokens: Map<string, string>;
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

/**
 * The deliveries webhook `w` may have leased now: `perWebhook` (1 while its last call failed)
 * less those leased. A webhook whose deliveries another replica holds has none: only the
 * replica holding some (`held`, its webhooks) takes more, so the calls to one endpoint are made,
 * and bounded, by one replica at a time.
 */
const freePlaces = (perWebhook: string, held: string): string => `
  (SELECT CASE WHEN leased.count > 0 AND NOT w.id = ANY(${held}::uuid[]) THEN 0
     ELSE CASE WHEN w.errors_since_last_success > 0 THEN 1 ELSE ${perWebhook} END - leased.count
     END
   FROM (SELECT count(*)::int AS count FROM ${S}.webhook_deliveries b
         WHERE b.webhook_id = w.id AND b.state = 'pending' AND b.lease_until IS NOT NULL
           AND b.lease_until > now()) leased) AS free`;

/**
 * Inserts the deliveries, due now; a pair (event, webhook) already there is left alone. Those a
 * claim would take at once are leased in the same statement and answered, for the caller to
 * send: per webhook no more than its free places (as the claim counts them) and only while none
 * of its deliveries waits unleased (those go first, through the claim), $8 in all at most.
 */
const INSERT_SQL = `
  WITH input AS (
    SELECT u.*, row_number() OVER (PARTITION BY u.webhook_id ORDER BY u.ord) AS webhook_rank
    FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::varchar[], $5::varchar[], $6::text[])
      WITH ORDINALITY AS u(id, webhook_id, account_id, event_id, event_type, body, ord)
  ), places AS (
    SELECT w.id AS webhook_id,
      ${freePlaces('$7', '$10')}
    FROM ${S}.webhooks w
    WHERE $8 > 0 AND w.enabled AND w.id IN (SELECT webhook_id FROM input)
      AND NOT EXISTS (
        SELECT 1 FROM ${S}.webhook_deliveries d
        WHERE d.webhook_id = w.id AND d.state = 'pending' AND d.next_attempt_at <= now()
          AND (d.lease_until IS NULL OR d.lease_until <= now()))
  ), chosen AS (
    SELECT input.id, row_number() OVER (ORDER BY input.webhook_rank, input.ord) AS rank
    FROM input JOIN places ON places.webhook_id = input.webhook_id
    WHERE input.webhook_rank <= places.free
  ), inserted AS (
    INSERT INTO ${S}.webhook_deliveries (id, webhook_id, account_id, event_id, event_type, body,
      next_attempt_at, lease_until, lease_token)
    SELECT input.id, input.webhook_id, input.account_id, input.event_id, input.event_type,
      input.body, now(),
      CASE WHEN chosen.rank <= $8 THEN now() + make_interval(secs => $9::double precision / 1000) END,
      CASE WHEN chosen.rank <= $8 THEN gen_random_uuid() END
    FROM input LEFT JOIN chosen ON chosen.id = input.id
    ORDER BY input.ord
    ON CONFLICT (event_id, webhook_id) DO NOTHING
    RETURNING id, webhook_id, event_id, event_type, body, attempts, lease_token
  )
  SELECT i.*, w.url, w.secret_ciphertext, w.errors_since_last_success > 0 AS failing
  FROM inserted i JOIN ${S}.webhooks w ON w.id = i.webhook_id
  WHERE i.lease_token IS NOT NULL`;

/**
 * Due deliveries of enabled webhooks, round-robin across webhooks (each one's oldest first), a
 * webhook's share cut to its free places (see freePlaces: a dead endpoint holds one place until
 * it answers again, a webhook another replica holds deliveries of has none); locked rows are skipped and
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
      ${freePlaces('$1', '$4')}
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
    w.url, w.secret_ciphertext, w.errors_since_last_success > 0 AS failing`;

/**
 * The deliveries' new states (only those whose lease the caller still holds) and their attempts'
 * rows, in one statement; answers the deliveries settled, with their webhooks.
 */
const SETTLE_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::varchar[], $4::timestamptz[], $5::timestamptz[],
      $6::int[], $7::text[], $8::int[], $9::text[])
      AS u(delivery_id, lease_token, state, next_attempt_at, attempted_at, response_status, error,
        duration_ms, response_body)
  ), settled AS (
    UPDATE ${S}.webhook_deliveries d
    SET state = input.state, attempts = d.attempts + 1,
        next_attempt_at = coalesce(input.next_attempt_at, d.next_attempt_at),
        lease_until = NULL, lease_token = NULL, updated_at = now()
    FROM input
    WHERE d.id = input.delivery_id AND d.lease_token = input.lease_token
    RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.attempts
  ), attempt AS (
    INSERT INTO ${S}.webhook_attempts (delivery_id, webhook_id, event_id, event_type, attempt,
      attempted_at, response_status, error, duration_ms, response_body, next_retry_at)
    SELECT settled.id, settled.webhook_id, settled.event_id, settled.event_type, settled.attempts,
      input.attempted_at, input.response_status, input.error, input.duration_ms,
      input.response_body, input.next_attempt_at
    FROM settled JOIN input ON input.delivery_id = settled.id
  )
  SELECT id AS delivery_id, webhook_id FROM settled`;

/**
 * A fan-out batch's deliveries, in one statement: each with its state after a first attempt (and
 * the attempt's row), or due now without one, or leased to the caller; a pair (event, webhook)
 * already there (a redelivered event) and a webhook deleted since are left alone. With $3 (every
 * attempt succeeded), the webhooks' counters too: locked in id order, as LOCK_COUNTERS_SQL does.
 * The rows come as one JSON array (FanOutInputRow): one JSON.stringify costs the client far less
 * than fifteen parameter arrays, each of whose strings node-postgres escapes one by one.
 */
const STORE_FAN_OUT_SQL = `
  WITH input AS (
    SELECT * FROM json_to_recordset($1::json) AS u(id uuid, webhook_id uuid, account_id uuid,
      event_id varchar, event_type varchar, body text, state varchar, attempts int,
      next_attempt_at timestamptz, leased boolean, attempted_at timestamptz, response_status int,
      error text, duration_ms int, response_body text, ord int)
  ), inserted AS (
    INSERT INTO ${S}.webhook_deliveries (id, webhook_id, account_id, event_id, event_type, body,
      state, attempts, next_attempt_at, lease_until, lease_token)
    SELECT input.id, input.webhook_id, input.account_id, input.event_id, input.event_type,
      input.body, input.state, input.attempts, coalesce(input.next_attempt_at, now()),
      CASE WHEN input.leased THEN now() + make_interval(secs => $2::double precision / 1000) END,
      CASE WHEN input.leased THEN gen_random_uuid() END
    FROM input
    WHERE EXISTS (SELECT 1 FROM ${S}.webhooks w WHERE w.id = input.webhook_id)
    ORDER BY input.ord
    ON CONFLICT (event_id, webhook_id) DO NOTHING
    RETURNING id, webhook_id, lease_token
  ), attempt AS (
    INSERT INTO ${S}.webhook_attempts (delivery_id, webhook_id, event_id, event_type, attempt,
      attempted_at, response_status, error, duration_ms, response_body, next_retry_at)
    SELECT input.id, input.webhook_id, input.event_id, input.event_type, 1, input.attempted_at,
      input.response_status, input.error, input.duration_ms, input.response_body,
      input.next_attempt_at
    FROM inserted JOIN input ON input.id = inserted.id
    WHERE input.attempts = 1
    ORDER BY input.ord
  ), successes AS (
    SELECT input.webhook_id, count(*)::int AS successes, max(input.attempted_at) AS last_at
    FROM inserted JOIN input ON input.id = inserted.id
    WHERE $3::boolean AND input.attempts = 1
    GROUP BY input.webhook_id
  ), locked AS (
    SELECT id FROM ${S}.webhooks WHERE id IN (SELECT webhook_id FROM successes)
    ORDER BY id
    FOR NO KEY UPDATE
  ), counted AS (
    UPDATE ${S}.webhooks w
    SET success_count = w.success_count + successes.successes, errors_since_last_success = 0,
        last_request_at = greatest(w.last_request_at, successes.last_at)
    FROM locked JOIN successes ON successes.webhook_id = locked.id
    WHERE w.id = locked.id
  )
  SELECT id AS delivery_id, webhook_id, lease_token FROM inserted`;

/** The webhooks' counters, locked in id order (so two batches never wait on each other in a cycle). */
const LOCK_COUNTERS_SQL = `
  SELECT id, account_id, name, url, errors_since_last_success, last_request_at, enabled,
    disabled_reason
  FROM ${S}.webhooks WHERE id = ANY($1::uuid[])
  ORDER BY id
  FOR NO KEY UPDATE`;

const UPDATE_COUNTERS_SQL = `
  UPDATE ${S}.webhooks w
  SET success_count = w.success_count + u.successes, error_count = w.error_count + u.errors,
      errors_since_last_success = u.errors_since_last_success, last_request_at = u.last_request_at,
      enabled = u.enabled, disabled_reason = u.disabled_reason
  FROM unnest($1::uuid[], $2::int[], $3::int[], $4::int[], $5::timestamptz[], $6::boolean[],
    $7::text[])
    AS u(id, successes, errors, errors_since_last_success, last_request_at, enabled,
      disabled_reason)
  WHERE w.id = u.id`;

/** `webhook.disabled` events, in the transaction that disables their webhooks. */
const DISABLED_NOTICES_SQL = `
  INSERT INTO ${S}.outbox (id, stream, subject, payload)
  SELECT u.id, $3, $4, u.payload FROM unnest($1::uuid[], $2::jsonb[]) AS u(id, payload)`;

const RELEASE_SQL = `
  UPDATE ${S}.webhook_deliveries d SET lease_until = NULL, lease_token = NULL
  FROM unnest($1::uuid[], $2::uuid[]) AS u(id, lease_token)
  WHERE d.id = u.id AND d.lease_token = u.lease_token`;

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

interface CountersRow {
  id: string;
  account_id: string;
  name: string;
  url: string;
  errors_since_last_success: number;
  last_request_at: Date | null;
  enabled: boolean;
  disabled_reason: string | null;
}

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
  failing: boolean;
}

interface FanOutRow {
  delivery_id: string;
  webhook_id: string;
  lease_token: string | null;
}

/** A row of STORE_FAN_OUT_SQL's input (null fields left out: json_to_recordset reads null). */
interface FanOutInputRow {
  id: string;
  webhook_id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  body: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at?: Date | null;
  leased: boolean;
  attempted_at?: Date;
  response_status?: number | null;
  error?: string | null;
  duration_ms?: number;
  response_body?: string;
  ord: number;
}

function attemptedRow(attempt: FirstAttempt, ord: number): FanOutInputRow {
  return {
    id: attempt.id,
    webhook_id: attempt.webhookId,
    account_id: attempt.accountId,
    event_id: attempt.eventId,
    event_type: attempt.eventType,
    body: attempt.body,
    state: attempt.state,
    attempts: 1,
    next_attempt_at: attempt.nextAttemptAt,
    leased: false,
    attempted_at: attempt.attemptedAt,
    response_status: attempt.responseStatus,
    error: attempt.error,
    duration_ms: attempt.durationMs,
    response_body: attempt.responseBody,
    ord,
  };
}

function unsentRow(delivery: NewDelivery, leased: boolean, ord: number): FanOutInputRow {
  return {
    id: delivery.id,
    webhook_id: delivery.webhookId,
    account_id: delivery.accountId,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    body: delivery.body,
    state: 'pending',
    attempts: 0,
    leased,
    ord,
  };
}

function leaseTokensOf(rows: readonly FanOutRow[]): Map<string, string> {
  return new Map(
    rows.flatMap((row) =>
      row.lease_token === null ? [] : [[row.delivery_id, row.lease_token] as const],
    ),
  );
}

const NO_LEASE: ClaimLimits = { perWebhook: 0, held: [], limit: 0, leaseMs: 0 };

function claimedDelivery(row: ClaimRow): ClaimedDelivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    eventId: row.event_id,
    eventType: row.event_type,
    body: row.body,
    attempts: row.attempts,
    leaseToken: row.lease_token,
    url: row.url,
    secretCiphertext: row.secret_ciphertext,
    webhookFailing: row.failing,
  };
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
    const rows = await preparedQuery<{
      index: number;
      webhook_id: string;
      endpoint: boolean;
      streamed: boolean;
    }>(manager, SUBSCRIBERS_SQL, [
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

  /**
   * Inserts the deliveries, due now; a pair (event, webhook) already there is left alone. Answers
   * those leased at once within `lease` (none without it), for the caller to send.
   */
  async insert(
    deliveries: readonly NewDelivery[],
    lease: ClaimLimits = NO_LEASE,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ClaimedDelivery[]> {
    if (deliveries.length === 0) return [];
    const rows = await preparedQuery<ClaimRow>(manager, INSERT_SQL, [
      deliveries.map((delivery) => delivery.id),
      deliveries.map((delivery) => delivery.webhookId),
      deliveries.map((delivery) => delivery.accountId),
      deliveries.map((delivery) => delivery.eventId),
      deliveries.map((delivery) => delivery.eventType),
      deliveries.map((delivery) => delivery.body),
      lease.perWebhook,
      lease.limit,
      lease.leaseMs,
      lease.held,
    ]);
    return rows.map(claimedDelivery);
  }

  async claimDue(limits: ClaimLimits): Promise<ClaimedDelivery[]> {
    if (limits.limit <= 0) return [];
    const rows = await preparedQuery<ClaimRow>(this.dataSource.manager, CLAIM_SQL, [
      limits.perWebhook,
      limits.limit,
      limits.leaseMs,
      limits.held,
    ]);
    return rows.map(claimedDelivery);
  }

  /**
   * Records the attempts in one transaction: the deliveries' new states and the attempts' rows,
   * then each webhook's counters, its attempts applied in the order they were made. Answers the
   * recorded ones by delivery id (an attempt whose lease was lost is not recorded: another
   * replica took the delivery over).
   */
  async recordAttempts(
    records: readonly AttemptRecord[],
    disableAfterFailures: number,
  ): Promise<Map<string, RecordedAttempt>> {
    if (records.length === 0) return new Map();
    return this.dataSource.transaction(async (manager) => {
      const settled = await preparedQuery<{ delivery_id: string; webhook_id: string }>(
        manager,
        SETTLE_SQL,
        [
          records.map((record) => record.deliveryId),
          records.map((record) => record.leaseToken),
          records.map((record) => record.state),
          records.map((record) => record.nextAttemptAt),
          records.map((record) => record.attemptedAt),
          records.map((record) => record.responseStatus),
          records.map((record) => record.error),
          records.map((record) => record.durationMs),
          records.map((record) => record.responseBody),
        ],
      );
      const webhookOf = new Map(settled.map((row) => [row.delivery_id, row.webhook_id]));
      const counted = records.filter((record) => webhookOf.has(record.deliveryId));
      return this.countAttempts(
        manager,
        counted.map((record) => ({ ...record, webhookId: webhookOf.get(record.deliveryId) ?? '' })),
        disableAfterFailures,
      );
    });
  }

  /**
   * Stores a fan-out batch's deliveries and its first attempts, and applies those attempts to
   * their webhooks' counters (see STORE_FAN_OUT_SQL): in one statement when they all succeeded,
   * else in one transaction that applies them as recordAttempts does (failures may disable).
   */
  async storeFanOut(records: FanOutRecords, disableAfterFailures: number): Promise<StoredFanOut> {
    if (records.attempted.every((attempt) => attempt.succeeded)) {
      const inserted = await this.insertFanOut(this.dataSource.manager, records, true);
      const stored = new Set(inserted.map((row) => row.delivery_id));
      const recorded = new Map(
        records.attempted
          .filter((attempt) => stored.has(attempt.id))
          .map((attempt) => [
            attempt.id,
            { webhookEnabled: true, accountId: attempt.accountId } satisfies RecordedAttempt,
          ]),
      );
      return { recorded, leaseTokens: leaseTokensOf(inserted) };
    }
    return this.dataSource.transaction(async (manager) => {
      const inserted = await this.insertFanOut(manager, records, false);
      const stored = new Set(inserted.map((row) => row.delivery_id));
      const recorded = await this.countAttempts(
        manager,
        records.attempted
          .filter((attempt) => stored.has(attempt.id))
          .map((attempt) => ({ ...attempt, deliveryId: attempt.id })),
        disableAfterFailures,
      );
      return { recorded, leaseTokens: leaseTokensOf(inserted) };
    });
  }

  private async insertFanOut(
    manager: EntityManager,
    records: FanOutRecords,
    countSuccesses: boolean,
  ): Promise<FanOutRow[]> {
    const rows: FanOutInputRow[] = [];
    for (const attempt of records.attempted) rows.push(attemptedRow(attempt, rows.length));
    for (const delivery of records.unsent) rows.push(unsentRow(delivery, false, rows.length));
    for (const delivery of records.leased) rows.push(unsentRow(delivery, true, rows.length));
    if (rows.length === 0) return [];
    return preparedQuery<FanOutRow>(manager, STORE_FAN_OUT_SQL, [
      JSON.stringify(rows),
      records.leaseMs,
      countSuccesses,
    ]);
  }

  /**
   * Applies the attempts to their webhooks' counters; answers, by delivery id, each one's webhook
   * `enabled` after them all.
   */
  private async countAttempts(
    manager: EntityManager,
    attempts: ReadonlyArray<CountedAttempt & { webhookId: string; deliveryId: string }>,
    disableAfterFailures: number,
  ): Promise<Map<string, RecordedAttempt>> {
    const webhookIds = [...new Set(attempts.map((attempt) => attempt.webhookId))];
    if (webhookIds.length === 0) return new Map();
    const rows = await preparedQuery<CountersRow>(manager, LOCK_COUNTERS_SQL, [webhookIds]);
    const updated = rows.map((row) => {
      const after = countersAddedTo(
        row,
        attempts.filter((attempt) => attempt.webhookId === row.id),
        disableAfterFailures,
      );
      return { id: row.id, row, after };
    });
    await preparedQuery(manager, UPDATE_COUNTERS_SQL, [
      updated.map(({ id }) => id),
      updated.map(({ after }) => after.successCount),
      updated.map(({ after }) => after.errorCount),
      updated.map(({ after }) => after.errorsSinceLastSuccess),
      updated.map(({ after }) => after.lastRequestAt),
      updated.map(({ after }) => after.enabled),
      updated.map(({ after }) => after.disabledReason),
    ]);
    const notices = updated.flatMap(({ row, after }) =>
      after.disabledBy ? [disabledNotice(row, after.disabledBy)] : [],
    );
    if (notices.length > 0) {
      await manager.query(DISABLED_NOTICES_SQL, [
        notices.map((notice) => notice.id),
        notices.map((notice) => JSON.stringify(notice)),
        DISABLED_SUBJECT.stream,
        DISABLED_SUBJECT.name,
      ]);
    }
    const after = new Map(
      updated.map(({ id, row, after }) => [
        id,
        { webhookEnabled: after.enabled, accountId: row.account_id },
      ]),
    );
    return new Map(
      attempts.flatMap((attempt) => {
        const recorded = after.get(attempt.webhookId);
        return recorded ? [[attempt.deliveryId, recorded] as const] : [];
      }),
    );
  }

  /** Gives leased deliveries back unsent, for any replica's next claim. */
  async releaseLeases(
    leases: ReadonlyArray<Pick<ClaimedDelivery, 'id' | 'leaseToken'>>,
  ): Promise<void> {
    if (leases.length === 0) return;
    await this.dataSource.query(RELEASE_SQL, [
      leases.map((lease) => lease.id),
      leases.map((lease) => lease.leaseToken),
    ]);
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

/** The `webhook.disabled` event of a webhook its attempts just disabled. */
function disabledNotice(
  row: CountersRow,
  { attempt, consecutiveFailures }: DisablingAttempt,
): WebhookDisabledEvent {
  const at = attempt.attemptedAt.toISOString();
  return {
    id: randomUUID(),
    type: 'webhook.disabled',
    timestamp: at,
    data: {
      account_id: row.account_id,
      webhook_id: row.id,
      name: row.name,
      url: row.url,
      reason: attempt.gone ? 'gone' : 'consecutive_failures',
      consecutive_failures: consecutiveFailures,
      last_status: attempt.responseStatus ?? null,
      disabled_at: at,
    },
  };
}
