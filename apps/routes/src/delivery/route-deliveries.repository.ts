import { randomUUID } from 'node:crypto';

import { RoutesStreamSubjects } from '@envoi/contracts-routes';
import { preparedQuery } from '@envoi/shared-database';
import { countersAddedTo } from '@envoi/shared-outbound';
import { enqueueEvent } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import type { RouteEntity } from '../routes/route.entity';
import type { RouteDeliveryState } from './route-delivery.entity';

/** What a call needs of its route. */
export type RouteCallTarget = Pick<
  RouteEntity,
  'id' | 'url' | 'secretCiphertext' | 'attachments' | 'headers' | 'stripReplies'
>;

interface ClaimRow {
  id: string;
  route_id: string;
  inbound_id: string;
  recipients: string[];
  attempts: number;
  payload: string | null;
  /** The route's columns; null when it has gone or is disabled. */
  url: string | null;
  secret_ciphertext: string | null;
  attachments: boolean | null;
  headers: boolean | null;
  strip_replies: boolean | null;
}

interface CountersRow {
  id: string;
  account_id: string;
  name: string;
  url: string;
  domain_name: string | null;
  errors_since_last_success: number;
  last_request_at: Date | null;
  enabled: boolean;
}

/** A delivery this replica holds for one call, with what the call needs. */
export interface ClaimedRouteDelivery {
  id: string;
  routeId: string;
  inboundId: string;
  recipients: string[];
  /** This call's number, the first being 1. */
  attempt: number;
  /** The body to send, built at intake; null for a call planned before bodies were kept. */
  payload: string | null;
  /** Its route; null when the route has gone or is disabled. */
  route: RouteCallTarget | null;
}

/** What a call's result means for its delivery and its route. */
export interface RouteCallOutcome {
  succeeded: boolean;
  /** The next call's time; null once the delivery is settled (delivered or given up). */
  nextAttemptAt: Date | null;
  status: number | null;
  error: string | null;
}

/**
 * What a claim takes: up to `limit` due deliveries, leased for `leaseMs`, no more than
 * `perRoute` leased per route at once.
 */
export interface ClaimLimits {
  limit: number;
  leaseMs: number;
  perRoute: number;
  /** First attempts in flight on this replica, by route: they hold places of their routes. */
  directCalls: { routeIds: string[]; counts: number[] };
}

/** A call made, to record on its delivery and its route's counters. */
export interface RouteCallRecord extends RouteCallOutcome {
  deliveryId: string;
  routeId: string;
  attemptedAt: Date;
}

/** Claims are made one at a time over every replica (a transaction-scoped advisory lock). */
const CLAIM_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtext('routes.route_deliveries.claim'))`;

/**
 * Claims up to $1 due deliveries for $2 ms, oldest due first, no more per route than $3 less
 * those of the route already leased and less the first attempts in flight on this replica ($4
 * routes, $5 calls each): a slow or dead route URL holds at most $3 calls and never the places
 * of other routes. A crashed replica's lease expires and another one makes the call.
 */
const CLAIM_SQL = `
  WITH leased AS (
    SELECT route_id, sum(count)::int AS count FROM (
      SELECT route_id, count(*)::int AS count FROM routes.route_deliveries
      WHERE state = 'pending' AND lease_until > now()
      GROUP BY route_id
      UNION ALL
      SELECT route_id, count FROM unnest($4::uuid[], $5::int[]) AS direct(route_id, count)
    ) AS held
    GROUP BY route_id
  ), due AS (
    SELECT d.id, d.next_attempt_at, d.route_id,
      row_number() OVER (PARTITION BY d.route_id ORDER BY d.next_attempt_at, d.id) AS rank
    FROM routes.route_deliveries d
    WHERE d.state = 'pending' AND d.next_attempt_at <= now()
      AND (d.lease_until IS NULL OR d.lease_until <= now())
  ), picked AS (
    SELECT due.id FROM due LEFT JOIN leased ON leased.route_id = due.route_id
    WHERE due.rank <= $3 - COALESCE(leased.count, 0)
    ORDER BY due.next_attempt_at
    LIMIT $1
  ), claimed AS (
    UPDATE routes.route_deliveries AS d
    SET lease_until = now() + make_interval(secs => $2::double precision / 1000),
        attempts = d.attempts + 1
    FROM picked WHERE d.id = picked.id
    RETURNING d.id, d.route_id, d.inbound_id, d.recipients, d.attempts, d.payload
  )
  SELECT claimed.*, r.url, r.secret_ciphertext, r.attachments, r.headers, r.strip_replies
  FROM claimed LEFT JOIN routes.routes r ON r.id = claimed.route_id AND r.enabled`;

/**
 * Settles the calls made (delivered, given up, or pending until their next attempt) and locks
 * their routes' counters: one row per delivery settled, with its route's counters.
 */
const SETTLE_SQL = `
  WITH settled AS (
    UPDATE routes.route_deliveries d
    SET state = u.state, next_attempt_at = COALESCE(u.next_attempt_at, d.next_attempt_at),
        lease_until = NULL, last_status = u.status, last_error = u.error, updated_at = now()
    FROM unnest($1::uuid[], $2::varchar[], $3::timestamptz[], $4::int[], $5::text[])
      AS u(id, state, next_attempt_at, status, error)
    WHERE d.id = u.id
    RETURNING d.id, d.route_id
  )
  SELECT settled.id AS delivery_id, r.id, r.account_id, r.name, r.url, r.domain_name,
    r.errors_since_last_success, r.last_request_at, r.enabled
  FROM settled JOIN routes.routes r ON r.id = settled.route_id
  ORDER BY r.id
  FOR NO KEY UPDATE OF r`;

/** The counters of routes ($1), locked for their update. */
const LOCK_COUNTERS_SQL = `
  SELECT id, account_id, name, url, domain_name, errors_since_last_success, last_request_at,
    enabled
  FROM routes.routes WHERE id = ANY($1::uuid[])
  ORDER BY id
  FOR NO KEY UPDATE`;

const UPDATE_COUNTERS_SQL = `
  UPDATE routes.routes r
  SET success_count = r.success_count + u.successes, error_count = r.error_count + u.errors,
      errors_since_last_success = u.errors_since_last_success, last_request_at = u.last_request_at,
      enabled = u.enabled
  FROM unnest($1::uuid[], $2::int[], $3::int[], $4::int[], $5::timestamptz[], $6::boolean[])
    AS u(id, successes, errors, errors_since_last_success, last_request_at, enabled)
  WHERE r.id = u.id`;

/**
 * Deletes up to $2 routed messages (their calls go with them) received over $1 ms ago whose
 * calls are all settled since at least as long.
 */
const PURGE_SQL = `
  WITH old AS (
    SELECT m.id FROM routes.inbound_messages m
    WHERE m.created_at < now() - make_interval(secs => $1::double precision / 1000)
      AND NOT EXISTS (
        SELECT 1 FROM routes.route_deliveries d
        WHERE d.inbound_id = m.id
          AND (d.state = 'pending'
            OR d.updated_at >= now() - make_interval(secs => $1::double precision / 1000))
      )
    ORDER BY m.created_at
    LIMIT $2
  ),
  purged AS (
    DELETE FROM routes.inbound_messages m USING old WHERE m.id = old.id RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

/** The statements of the route delivery engine. */
@Injectable()
export class RouteDeliveriesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Leases up to `limit` due deliveries, no more than `perRoute` leased per route at once, with
   * their bodies and their routes.
   */
  claim(limits: ClaimLimits): Promise<ClaimedRouteDelivery[]> {
    return this.dataSource.transaction((manager) => claimIn(manager, limits));
  }

  /** The bytes of a routed message (for a call planned without its body); null when gone. */
  async raw(inboundId: string): Promise<Buffer | null> {
    const [row] = await this.dataSource.query<Array<{ raw: Buffer }>>(
      `SELECT raw FROM routes.inbound_messages WHERE id = $1`,
      [inboundId],
    );
    return row?.raw ?? null;
  }

  /** Gives up a delivery that can never be called (its route gone or disabled, its message refused); its counters are left alone. */
  async drop(deliveryId: string, reason: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE routes.route_deliveries
       SET state = 'given_up', lease_until = NULL, last_error = $2, updated_at = now()
       WHERE id = $1`,
      [deliveryId, reason],
    );
  }

  /** Deletes a batch of old routed messages whose calls are settled; answers how many went. */
  async purgeSettled(retentionMs: number, limit: number): Promise<number> {
    const [row] = await this.dataSource.query<Array<{ purged: number }>>(PURGE_SQL, [
      retentionMs,
      limit,
    ]);
    return row?.purged ?? 0;
  }

  /**
   * Records calls on their deliveries and their routes' counters, together, in as many
   * statements as for one call: each route's counters as if its calls had been recorded one by
   * one (notes 2.8: disabled after `disableAfterFailures` failures in a row, the members told
   * through the outbox). A delivery gone since (its route deleted) is not counted. Then, in the
   * same transaction, claims the next calls for the places these leave (see `claim`). Answers
   * the ids of the deliveries recorded, the calls claimed and the domains of the routes disabled.
   */
  async recordCalls(
    records: readonly RouteCallRecord[],
    disableAfterFailures: number,
    next: ClaimLimits,
  ): Promise<{
    recorded: Map<string, true>;
    claimed: ClaimedRouteDelivery[];
    disabledDomains: Array<string | null>;
  }> {
    return this.dataSource.transaction(async (manager) => {
      const settled = await preparedQuery<CountersRow & { delivery_id: string }>(
        manager,
        SETTLE_SQL,
        [
          records.map((record) => record.deliveryId),
          records.map(stateAfter),
          records.map((record) => record.nextAttemptAt),
          records.map((record) => record.status),
          records.map((record) => record.error),
        ],
      );
      const settledIds = new Set(settled.map((row) => row.delivery_id));
      const counted = records.filter((record) => settledIds.has(record.deliveryId));
      const routes = [...new Map(settled.map((row) => [row.id, row])).values()];
      const disabled = await countCalls(manager, routes, counted, disableAfterFailures);
      const claimed = next.limit > 0 ? await claimIn(manager, next) : [];
      return {
        recorded: new Map(counted.map((record) => [record.deliveryId, true as const])),
        claimed,
        disabledDomains: disabled.map((route) => route.domain_name),
      };
    });
  }
}

/**
 * Counts, within `manager`'s transaction, calls made before their deliveries were stored on their
 * routes' counters, as `recordCalls` does; answers the domains of the routes they disabled.
 */
export async function countFirstAttempts(
  manager: EntityManager,
  calls: readonly RouteCallRecord[],
  disableAfterFailures: number,
): Promise<Array<string | null>> {
  if (calls.length === 0) return [];
  const routes = await preparedQuery<CountersRow>(manager, LOCK_COUNTERS_SQL, [
    [...new Set(calls.map((call) => call.routeId))],
  ]);
  const disabled = await countCalls(manager, routes, calls, disableAfterFailures);
  return disabled.map((route) => route.domain_name);
}

async function claimIn(
  manager: EntityManager,
  { limit, leaseMs, perRoute, directCalls }: ClaimLimits,
): Promise<ClaimedRouteDelivery[]> {
  await preparedQuery(manager, CLAIM_LOCK_SQL, []);
  const rows = await preparedQuery<ClaimRow>(manager, CLAIM_SQL, [
    limit,
    leaseMs,
    perRoute,
    directCalls.routeIds,
    directCalls.counts,
  ]);
  return rows.map((row) => ({
    id: row.id,
    routeId: row.route_id,
    inboundId: row.inbound_id,
    recipients: row.recipients,
    attempt: row.attempts,
    payload: row.payload,
    route: routeOf(row),
  }));
}

function routeOf(row: ClaimRow): RouteCallTarget | null {
  if (row.url === null) return null;
  return {
    id: row.route_id,
    url: row.url,
    secretCiphertext: row.secret_ciphertext ?? '',
    attachments: row.attachments ?? false,
    headers: row.headers ?? false,
    stripReplies: row.strip_replies ?? false,
  };
}

export function stateAfter(record: RouteCallOutcome): RouteDeliveryState {
  if (record.succeeded) return 'delivered';
  return record.nextAttemptAt === null ? 'given_up' : 'pending';
}

/**
 * Applies the calls to their routes' counters (`rows`, locked); `route.disabled` for a route they
 * disable. Answers the routes they disabled.
 */
async function countCalls(
  manager: EntityManager,
  rows: readonly CountersRow[],
  calls: readonly RouteCallRecord[],
  disableAfterFailures: number,
): Promise<CountersRow[]> {
  if (rows.length === 0) return [];
  const updated = rows.map((row) => {
    const ofRoute = calls.filter((call) => call.routeId === row.id);
    const after = countersAddedTo(
      row,
      ofRoute.map((call) => ({
        attemptedAt: call.attemptedAt,
        succeeded: call.succeeded,
        gone: false,
        responseStatus: call.status,
      })),
      disableAfterFailures,
    );
    return { row, after };
  });
  await preparedQuery(manager, UPDATE_COUNTERS_SQL, [
    updated.map(({ row }) => row.id),
    updated.map(({ after }) => after.successCount),
    updated.map(({ after }) => after.errorCount),
    updated.map(({ after }) => after.errorsSinceLastSuccess),
    updated.map(({ after }) => after.lastRequestAt),
    updated.map(({ after }) => after.enabled),
  ]);
  const disabled: CountersRow[] = [];
  for (const { row, after } of updated) {
    if (!after.disabledBy) continue;
    disabled.push(row);
    const now = new Date().toISOString();
    await enqueueEvent(manager, RoutesStreamSubjects.routeDisabled, {
      id: randomUUID(),
      type: 'route.disabled',
      timestamp: now,
      data: {
        account_id: row.account_id,
        route_id: row.id,
        name: row.name,
        url: row.url,
        consecutive_failures: after.disabledBy.consecutiveFailures,
        last_status: after.disabledBy.attempt.responseStatus ?? null,
        disabled_at: now,
      },
    });
  }
  return disabled;
}
