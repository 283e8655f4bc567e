import type { GcraDecision, RateLimit } from './gcra';

/**
 * The GCRA step on a bucket every replica of an edge shares (one per account and limit class),
 * taken atomically by the store: the gateway's is a PostgreSQL row.
 */
export interface RateLimitStore {
  take(accountId: string, limitClass: string, limit: RateLimit): Promise<GcraDecision>;
}
