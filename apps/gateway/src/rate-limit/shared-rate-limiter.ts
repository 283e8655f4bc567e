import {
  type GcraDecision,
  periodMs,
  type RateLimit,
  type RateLimitStore,
} from '@envoi/shared-edge';
import { Injectable } from '@nestjs/common';

import { RateLimitRepository } from './rate-limit.repository';

/** Per-account limits shared by every gateway replica, in the gateway's PostgreSQL schema. */
@Injectable()
export class SharedRateLimiter implements RateLimitStore {
  constructor(private readonly buckets: RateLimitRepository) {}

  async take(accountId: string, limitClass: string, limit: RateLimit): Promise<GcraDecision> {
    const period = periodMs(limit);
    const burst = limit.burst * period;
    const { allowed, backlogMs } = await this.buckets.step(accountId, limitClass, period, burst);
    return {
      allowed,
      tatMs: Date.now() + backlogMs,
      // Denied: the next request fits once the backlog plus one period is within the burst.
      retryAfterMs: allowed ? 0 : Math.max(0, backlogMs + period - burst),
    };
  }
}
