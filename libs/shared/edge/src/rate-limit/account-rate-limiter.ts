import type { GcraDecision, RateLimit } from './gcra';
import { LocalRateLimiter } from './local-rate-limiter';
import type { ReplicatedRateLimiter } from './replicated-rate-limiter';

export const RATE_LIMIT_MODES = ['shared', 'local', 'off'] as const;
export type RateLimitMode = (typeof RATE_LIMIT_MODES)[number];

export interface AccountRateLimiterOptions<Class extends string> {
  mode: RateLimitMode;
  limits: Record<Class, RateLimit>;
  /** The limits held with the other replicas, for `shared`. */
  replicated: ReplicatedRateLimiter<Class>;
}

const ALLOWED: GcraDecision = { allowed: true, tatMs: 0, retryAfterMs: 0 };

/**
 * Per-account rate limits by mode: `shared` holds them with every replica (each deciding in
 * memory, see ReplicatedRateLimiter), `local` in this process only, `off` not at all.
 */
export class AccountRateLimiter<Class extends string> {
  private readonly local = new LocalRateLimiter();

  constructor(private readonly options: AccountRateLimiterOptions<Class>) {}

  decide(accountId: string, limitClass: Class): GcraDecision {
    const { mode, limits, replicated } = this.options;
    if (mode === 'off') return ALLOWED;
    if (mode === 'local') return this.local.take(accountId, limitClass, limits[limitClass]);
    return replicated.take(accountId, limitClass);
  }
}
