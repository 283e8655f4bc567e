import {
  type GcraDecision,
  periodMs,
  type RateLimit,
  type RateLimitStore,
} from '@envoi/shared-edge';
import { Injectable } from '@nestjs/common';

import { GatewayDatabase } from '../database/gateway-database';

interface StepRow {
  allowed: boolean;
  /** How far the stored TAT is ahead of the database clock, in milliseconds. */
  backlog_ms: number;
}

/**
 * The GCRA step of @envoi/shared-edge's gcra.ts as one atomic statement on the shared bucket row, timed by the
 * database clock so every replica agrees. $3 = period, $4 = burst × period, both in ms.
 */
const STEP_SQL = `
  INSERT INTO "gateway"."rate_limit_buckets" AS b (account_id, limit_class, tat, allowed)
  VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond', true)
  ON CONFLICT (account_id, limit_class) DO UPDATE SET
    allowed = greatest(b.tat, clock_timestamp()) + $3 * interval '1 millisecond'
              <= clock_timestamp() + $4 * interval '1 millisecond',
    tat = CASE
      WHEN greatest(b.tat, clock_timestamp()) + $3 * interval '1 millisecond'
           <= clock_timestamp() + $4 * interval '1 millisecond'
      THEN greatest(b.tat, clock_timestamp()) + $3 * interval '1 millisecond'
      ELSE b.tat END
  RETURNING allowed, extract(epoch FROM tat - clock_timestamp()) * 1000 AS backlog_ms`;

/** Per-account limits shared by every gateway replica, in the gateway's PostgreSQL schema. */
@Injectable()
export class SharedRateLimiter implements RateLimitStore {
  constructor(private readonly database: GatewayDatabase) {}

  async take(accountId: string, limitClass: string, limit: RateLimit): Promise<GcraDecision> {
    const period = periodMs(limit);
    const result = await this.database.query<StepRow>(STEP_SQL, [
      accountId,
      limitClass,
      period,
      limit.burst * period,
    ]);
    const row = result.rows[0];
    if (!row) throw new Error('rate limit step returned no row');
    const backlogMs = Number(row.backlog_ms);
    return {
      allowed: row.allowed,
      tatMs: Date.now() + backlogMs,
      // Denied: the next request fits once the backlog plus one period is within the burst.
      retryAfterMs: row.allowed ? 0 : Math.max(0, backlogMs + period - limit.burst * period),
    };
  }
}
