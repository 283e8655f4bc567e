import { Injectable } from '@nestjs/common';

import { GatewayDatabase } from '../database/gateway-database';

interface StepRow {
  allowed: boolean;
  backlog_ms: number;
}

export interface BucketStep {
  allowed: boolean;
  /** How far the stored TAT is ahead of the database clock, in milliseconds. */
  backlogMs: number;
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

/** The statement on "gateway"."rate_limit_buckets". */
@Injectable()
export class RateLimitRepository {
  constructor(private readonly database: GatewayDatabase) {}

  /** Takes one request's period from the account's bucket when the burst allows it. */
  async step(
    accountId: string,
    limitClass: string,
    periodMs: number,
    burstMs: number,
  ): Promise<BucketStep> {
    const result = await this.database.query<StepRow>(STEP_SQL, [
      accountId,
      limitClass,
      periodMs,
      burstMs,
    ]);
    const row = result.rows[0];
    if (!row) throw new Error('rate limit step returned no row');
    return { allowed: row.allowed, backlogMs: Number(row.backlog_ms) };
  }
}
