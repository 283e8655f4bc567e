import { randomUUID } from 'node:crypto';

import { RoutesStreamSubjects } from '@envoi/contracts-routes';
import { enqueueEvent } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import type { RouteEntity } from '../routes/route.entity';

/** What a call needs of its route. */
export type RouteCallTarget = Pick<
  RouteEntity,
  'id' | 'url' | 'secretCiphertext' | 'attachments' | 'headers' | 'stripReplies'
>;

interface CallTargetRow {
  id: string;
  url: string;
  secret_ciphertext: string;
  attachments: boolean;
  headers: boolean;
  strip_replies: boolean;
  raw: Buffer;
}

interface CountedRouteRow {
  id: string;
  account_id: string;
  name: string;
  url: string;
  errors_since_last_success: number;
  disabled_now: boolean;
}

/** A delivery this replica holds for one call, with what the call needs. */
export interface ClaimedRouteDelivery {
  id: string;
  routeId: string;
  inboundId: string;
  recipients: string[];
  /** This call's number, the first being 1. */
  attempt: number;
}

/** What a call's result means for its delivery and its route. */
export interface RouteCallOutcome {
  succeeded: boolean;
  /** The next call's time; null once the delivery is settled (delivered or given up). */
  nextAttemptAt: Date | null;
  status: number | null;
  error: string | null;
}

/** Claims are made one at a time over every replica (a transaction-scoped advisory lock). */
const CLAIM_LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtext('routes.route_deliveries.claim'))`;

/**
 * Claims up to $1 due deliveries for $2 ms, oldest due first, no more per route than $3 less
 * those of the route already leased: a slow or dead route URL holds at most $3 calls and never
 * the places of other routes. A crashed replica's lease expires and another one makes the call.
 */
const CLAIM_SQL = `
  WITH leased AS (
    SELECT route_id, count(*)::int AS count FROM routes.route_deliveries
    WHERE state = 'pending' AND lease_until > now()
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
    RETURNING d.id, d.route_id, d.inbound_id, d.recipients, d.attempts
  )
  SELECT * FROM claimed`;

/**
 * The counters of a route after a call; disabled once $3 calls in a row have failed. Answers the
 * route when this very call disabled it (it was enabled before), for the members to be told.
 */
const COUNT_SQL = `
  WITH counted AS (
  UPDATE routes.routes r
  SET success_count = r.success_count + CASE WHEN $2 THEN 1 ELSE 0 END,
      error_count = r.error_count + CASE WHEN $2 THEN 0 ELSE 1 END,
      errors_since_last_success = CASE WHEN $2 THEN 0 ELSE r.errors_since_last_success + 1 END,
      enabled = r.enabled AND ($2 OR r.errors_since_last_success + 1 < $3),
      last_request_at = now()
  FROM (SELECT id, enabled FROM routes.routes WHERE id = $1 FOR UPDATE) before
  WHERE r.id = before.id
  RETURNING r.id, r.account_id, r.name, r.url, r.errors_since_last_success,
    before.enabled AND NOT r.enabled AS disabled_now
  )
  SELECT * FROM counted`;

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

  /** Leases up to `limit` due deliveries, no more than `perRoute` leased per route at once. */
  async claim(limit: number, leaseMs: number, perRoute: number): Promise<ClaimedRouteDelivery[]> {
    const rows = await this.dataSource.transaction((manager) =>
      manager.query(CLAIM_LOCK_SQL).then(() =>
        manager.query<
          Array<{
            id: string;
            route_id: string;
            inbound_id: string;
            recipients: string[];
            attempts: number;
          }>
        >(CLAIM_SQL, [limit, leaseMs, perRoute]),
      ),
    );
    return rows.map((row) => ({
      id: row.id,
      routeId: row.route_id,
      inboundId: row.inbound_id,
      recipients: row.recipients,
      attempt: row.attempts,
    }));
  }

  /** The route and the raw message of a delivery; null when the route has gone or is disabled. */
  async callTarget(
    delivery: ClaimedRouteDelivery,
  ): Promise<{ route: RouteCallTarget; raw: Buffer } | null> {
    const [row] = await this.dataSource.query<CallTargetRow[]>(
      `SELECT r.id, r.url, r.secret_ciphertext, r.attachments, r.headers, r.strip_replies, m.raw
       FROM routes.route_deliveries d
       JOIN routes.routes r ON r.id = d.route_id
       JOIN routes.inbound_messages m ON m.id = d.inbound_id
       WHERE d.id = $1 AND r.enabled`,
      [delivery.id],
    );
    if (!row) return null;
    return {
      route: {
        id: row.id,
        url: row.url,
        secretCiphertext: row.secret_ciphertext,
        attachments: row.attachments,
        headers: row.headers,
        stripReplies: row.strip_replies,
      },
      raw: row.raw,
    };
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

  /** Records a call's outcome on its delivery and its route's counters, together. */
  async record(
    delivery: ClaimedRouteDelivery,
    outcome: RouteCallOutcome,
    disableAfterFailures: number,
  ): Promise<void> {
    const state = outcome.succeeded
      ? 'delivered'
      : outcome.nextAttemptAt === null
        ? 'given_up'
        : 'pending';
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE routes.route_deliveries
         SET state = $2, next_attempt_at = COALESCE($3, next_attempt_at), lease_until = NULL,
             last_status = $4, last_error = $5, updated_at = now()
         WHERE id = $1`,
        [delivery.id, state, outcome.nextAttemptAt, outcome.status, outcome.error],
      );
      const [counted] = await manager.query<CountedRouteRow[]>(COUNT_SQL, [
        delivery.routeId,
        outcome.succeeded,
        disableAfterFailures,
      ]);
      if (counted?.disabled_now) {
        await enqueueEvent(manager, RoutesStreamSubjects.routeDisabled, {
          id: randomUUID(),
          type: 'route.disabled',
          timestamp: new Date().toISOString(),
          data: {
            account_id: counted.account_id,
            route_id: counted.id,
            name: counted.name,
            url: counted.url,
            consecutive_failures: counted.errors_since_last_success,
            last_status: outcome.status,
            disabled_at: new Date().toISOString(),
          },
        });
      }
    });
  }
}
