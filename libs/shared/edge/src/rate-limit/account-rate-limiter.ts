import type { GcraDecision, RateLimit } from './gcra';
import { LocalRateLimiter } from './local-rate-limiter';
import type { RateLimitStore } from './rate-limit-store';

export const RATE_LIMIT_MODES = ['shared', 'local', 'off'] as const;
export type RateLimitMode = (typeof RATE_LIMIT_MODES)[number];
/** What happens to rate limiting while its shared store cannot answer in time. */
export const RATE_LIMIT_FALLBACKS = ['local', 'open'] as const;
export type RateLimitFallback = (typeof RATE_LIMIT_FALLBACKS)[number];

export interface AccountRateLimiterOptions<Class extends string> {
  mode: RateLimitMode;
  fallback: RateLimitFallback;
  limits: Record<Class, RateLimit>;
  /** A store slower than this counts as unavailable. */
  storeTimeoutMs: number;
  /** How long the fallback answers alone once the store was unavailable. */
  storeRetryMs: number;
  onStoreUnavailable: (error: unknown) => void;
}

const ALLOWED: GcraDecision = { allowed: true, tatMs: 0, retryAfterMs: 0 };

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rate limit store slower than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Per-account rate limits counted across every replica in a shared store. When the store fails
 * or answers too slowly, the limiter switches to its fallback for a while instead of making every
 * request wait or fail: `local` enforces the same limits per replica, `open` enforces none. The
 * limiter never turns a store outage into failed requests.
 */
export class AccountRateLimiter<Class extends string> {
  private readonly local = new LocalRateLimiter();
  private storeUnavailableUntil = 0;

  constructor(
    private readonly store: RateLimitStore,
    private readonly options: AccountRateLimiterOptions<Class>,
  ) {}

  async decide(accountId: string, limitClass: Class): Promise<GcraDecision> {
    const { mode, fallback, storeTimeoutMs, storeRetryMs } = this.options;
    const limit = this.options.limits[limitClass];
    if (mode === 'off') return ALLOWED;
    if (mode === 'local') return this.local.take(accountId, limitClass, limit);
    if (Date.now() >= this.storeUnavailableUntil) {
      try {
        return await withTimeout(this.store.take(accountId, limitClass, limit), storeTimeoutMs);
      } catch (error) {
        this.storeUnavailableUntil = Date.now() + storeRetryMs;
        this.options.onStoreUnavailable(error);
      }
    }
    if (fallback === 'open') return ALLOWED;
    return this.local.take(accountId, limitClass, limit);
  }
}
