import type { RateLimit } from './gcra';
import { LocalRateLimiter } from './local-rate-limiter';

const LIMIT: RateLimit = { perSecond: 5, burst: 3 };
const ACCOUNT_A = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const ACCOUNT_B = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const NOW = 1_700_000_000_000;
const IDLE_EVICTION_MS = 60_000;
const MAX_BUCKETS = 100_000;

function allowedOf(
  limiter: LocalRateLimiter,
  accountId: string,
  limitClass: string,
  count: number,
  nowMs = NOW,
): number {
  let allowed = 0;
  for (let i = 0; i < count; i += 1) {
    if (limiter.take(accountId, limitClass, LIMIT, nowMs).allowed) allowed += 1;
  }
  return allowed;
}

describe('LocalRateLimiter', () => {
  it('enforces the burst, then tells how long to wait', () => {
    const limiter = new LocalRateLimiter();
    expect(allowedOf(limiter, ACCOUNT_A, 'general', 3)).toBe(3);
    const denied = limiter.take(ACCOUNT_A, 'general', LIMIT, NOW);
    expect(denied.allowed).toBe(false);
    expect(denied.retryAfterMs).toBe(200);
    expect(limiter.take(ACCOUNT_A, 'general', LIMIT, NOW + 200).allowed).toBe(true);
  });

  it('keeps one bucket per account', () => {
    const limiter = new LocalRateLimiter();
    expect(allowedOf(limiter, ACCOUNT_A, 'general', 10)).toBe(3);
    expect(allowedOf(limiter, ACCOUNT_B, 'general', 10)).toBe(3);
    expect(limiter.size).toBe(2);
  });

  it('keeps one bucket per limit class', () => {
    const limiter = new LocalRateLimiter();
    expect(allowedOf(limiter, ACCOUNT_A, 'general', 10)).toBe(3);
    expect(allowedOf(limiter, ACCOUNT_A, 'statistics', 10)).toBe(3);
    expect(limiter.size).toBe(2);
  });

  it('does not keep a bucket for a request it denies', () => {
    const limiter = new LocalRateLimiter();
    const tiny: RateLimit = { perSecond: 1, burst: 1 };
    expect(limiter.take(ACCOUNT_A, 'general', tiny, NOW).allowed).toBe(true);
    expect(limiter.take(ACCOUNT_A, 'general', tiny, NOW).allowed).toBe(false);
    expect(limiter.size).toBe(1);
  });

  it('forgets buckets idle for a minute (they would be full again)', () => {
    const limiter = new LocalRateLimiter();
    allowedOf(limiter, ACCOUNT_A, 'general', 3);
    allowedOf(limiter, ACCOUNT_B, 'general', 1, NOW + 30_000);
    expect(limiter.size).toBe(2);
    // A's TAT is NOW + 600 ms: idle once a minute has passed since then.
    allowedOf(limiter, ACCOUNT_B, 'statistics', 1, NOW + 600 + IDLE_EVICTION_MS + 1);
    expect(limiter.size).toBe(2);
    // Forgetting A loses nothing: it gets its full burst again.
    expect(allowedOf(limiter, ACCOUNT_A, 'general', 10, NOW + 600 + IDLE_EVICTION_MS + 1)).toBe(3);
  });

  it('stays bounded, dropping the least recently used bucket first', () => {
    const limiter = new LocalRateLimiter();
    const accountId = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, '0')}`;
    for (let n = 0; n < MAX_BUCKETS; n += 1) limiter.take(accountId(n), 'general', LIMIT, NOW);
    expect(limiter.size).toBe(MAX_BUCKETS);
    // Account 0 is used again, so account 1 is now the least recently used.
    limiter.take(accountId(0), 'general', LIMIT, NOW);
    limiter.take(accountId(MAX_BUCKETS), 'general', LIMIT, NOW);
    expect(limiter.size).toBe(MAX_BUCKETS);
    // Account 0 kept its state (two taken of three), account 1 was dropped (three again).
    expect(allowedOf(limiter, accountId(0), 'general', 10)).toBe(1);
    expect(allowedOf(limiter, accountId(1), 'general', 10)).toBe(3);
    expect(limiter.size).toBe(MAX_BUCKETS);
  });
});
