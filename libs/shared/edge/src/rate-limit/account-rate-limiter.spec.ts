import { AccountRateLimiter, type RateLimitFallback } from './account-rate-limiter';
import type { GcraDecision, RateLimit } from './gcra';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const OTHER_ACCOUNT_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const STORE_TIMEOUT_MS = 50;
const STORE_RETRY_MS = 1_000;

type Take = (accountId: string, limitClass: string, limit: RateLimit) => Promise<GcraDecision>;

function setup(take: Take, fallback: RateLimitFallback = 'local') {
  const store = { take: jest.fn<ReturnType<Take>, Parameters<Take>>(take) };
  const warn = jest.fn();
  const limiter = new AccountRateLimiter(store, {
    mode: 'shared',
    fallback,
    limits: { general: { perSecond: 5, burst: 3 } },
    storeTimeoutMs: STORE_TIMEOUT_MS,
    storeRetryMs: STORE_RETRY_MS,
    onStoreUnavailable: warn,
  });
  return { limiter, shared: store, warn };
}

const ALLOW: GcraDecision = { allowed: true, tatMs: 0, retryAfterMs: 0 };
const DENY: GcraDecision = { allowed: false, tatMs: 0, retryAfterMs: 1_500 };

async function allowedOf(
  limiter: AccountRateLimiter<'general'>,
  count: number,
  accountId = ACCOUNT_ID,
) {
  let allowed = 0;
  for (let i = 0; i < count; i += 1) {
    if ((await limiter.decide(accountId, 'general')).allowed) allowed += 1;
  }
  return allowed;
}

afterEach(() => {
  jest.useRealTimers();
});

describe('AccountRateLimiter modes', () => {
  function limiterIn(mode: 'off' | 'local') {
    const store = { take: jest.fn(() => Promise.resolve(DENY)) };
    const limiter = new AccountRateLimiter(store, {
      mode,
      fallback: 'open',
      limits: { general: { perSecond: 5, burst: 3 } },
      storeTimeoutMs: STORE_TIMEOUT_MS,
      storeRetryMs: STORE_RETRY_MS,
      onStoreUnavailable: jest.fn(),
    });
    return { limiter, store };
  }

  it('allows everything when off, without asking the store', async () => {
    const { limiter, store } = limiterIn('off');
    expect(await allowedOf(limiter, 10)).toBe(10);
    expect(store.take).not.toHaveBeenCalled();
  });

  it('counts in this process only when local, without asking the store', async () => {
    const { limiter, store } = limiterIn('local');
    expect(await allowedOf(limiter, 10)).toBe(3);
    expect(store.take).not.toHaveBeenCalled();
  });
});

describe('AccountRateLimiter.decide', () => {
  it('returns the shared store decision while it answers', async () => {
    const { limiter } = setup(() => Promise.resolve(DENY));
    await expect(limiter.decide(ACCOUNT_ID, 'general')).resolves.toEqual(DENY);
  });

  it('falls back to the local limits when the store fails, per account', async () => {
    const { limiter, shared, warn } = setup(() => Promise.reject(new Error('connection refused')));
    expect(await allowedOf(limiter, 10)).toBe(3);
    expect(await allowedOf(limiter, 10, OTHER_ACCOUNT_ID)).toBe(3);
    // One failure switches to the fallback: the store is not asked again for a while.
    expect(shared.take).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('allows everything with the open fallback', async () => {
    const { limiter, shared } = setup(() => Promise.reject(new Error('down')), 'open');
    expect(await allowedOf(limiter, 20)).toBe(20);
    expect(shared.take).toHaveBeenCalledTimes(1);
  });

  it('gives up on a store slower than RATE_LIMIT_STORE_TIMEOUT_MS', async () => {
    jest.useFakeTimers();
    const { limiter, shared } = setup(() => new Promise<GcraDecision>(() => undefined));
    let settled: GcraDecision | undefined;
    const pending = limiter.decide(ACCOUNT_ID, 'general').then((decision) => {
      settled = decision;
      return decision;
    });
    await jest.advanceTimersByTimeAsync(STORE_TIMEOUT_MS - 1);
    expect(settled).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    await expect(pending).resolves.toMatchObject({ allowed: true });
    // Within the retry window the fallback answers at once, without waiting on the store.
    await expect(limiter.decide(ACCOUNT_ID, 'general')).resolves.toMatchObject({ allowed: true });
    expect(shared.take).toHaveBeenCalledTimes(1);
  });

  it('tries the store again once RATE_LIMIT_STORE_RETRY_MS has passed', async () => {
    jest.useFakeTimers();
    let failing = true;
    const { limiter, shared } = setup(() =>
      failing ? Promise.reject(new Error('down')) : Promise.resolve(DENY),
    );
    await expect(limiter.decide(ACCOUNT_ID, 'general')).resolves.toMatchObject({ allowed: true });
    failing = false;
    jest.advanceTimersByTime(STORE_RETRY_MS - 1);
    await expect(limiter.decide(ACCOUNT_ID, 'general')).resolves.toMatchObject({ allowed: true });
    expect(shared.take).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1);
    await expect(limiter.decide(ACCOUNT_ID, 'general')).resolves.toEqual(DENY);
    expect(shared.take).toHaveBeenCalledTimes(2);
  });

  it('leaves no timer behind when the store answers in time', async () => {
    jest.useFakeTimers();
    const { limiter } = setup(() => Promise.resolve(ALLOW));
    await limiter.decide(ACCOUNT_ID, 'general');
    expect(jest.getTimerCount()).toBe(0);
  });
});
