import { gcraDecide, type GcraDecision, type RateLimit } from './gcra';

/** Buckets idle longer than this are forgotten (they would be full again anyway). */
const IDLE_EVICTION_MS = 60_000;
const MAX_BUCKETS = 100_000;

/**
 * The same limits kept in this process only: the fallback while the shared store cannot answer.
 * Bounded in size; idle buckets are dropped.
 */
export class LocalRateLimiter {
  private readonly tats = new Map<string, number>();

  take(accountId: string, limitClass: string, limit: RateLimit, nowMs = Date.now()): GcraDecision {
    const bucket = `${limitClass}:${accountId}`;
    const decision = gcraDecide(this.tats.get(bucket), nowMs, limit);
    if (decision.allowed) {
      this.tats.delete(bucket); // re-insert: Map order then tracks recency for eviction
      this.tats.set(bucket, decision.tatMs);
      this.evict(nowMs);
    }
    return decision;
  }

  get size(): number {
    return this.tats.size;
  }

  private evict(nowMs: number): void {
    for (const [bucket, tat] of this.tats) {
      if (this.tats.size <= MAX_BUCKETS && tat > nowMs - IDLE_EVICTION_MS) return;
      this.tats.delete(bucket);
    }
  }
}
