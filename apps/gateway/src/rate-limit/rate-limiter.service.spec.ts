import { loadConfig } from '@envoi/shared-config';
import type { Logger } from '@envoi/shared-observability';
import type { FastifyRequest } from 'fastify';

import type { Principal } from '../auth/principal';
import { ApiError } from '../errors/api-error';
import { GatewayConfig } from '../gateway.config';
import type { EdgeRouteConfig } from '../http/edge-route';
import type { GcraDecision, RateLimit } from './gcra';
import { RATE_LIMITED_MESSAGE, RateLimiter } from './rate-limiter.service';
import type { SharedRateLimiter } from './shared-rate-limiter';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const OTHER_ACCOUNT_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const STORE_TIMEOUT_MS = 50;
const STORE_RETRY_MS = 1_000;

const ENV = {
  NATS_URL: 'nats://127.0.0.1:4222',
  TLS_CERT_FILE: '/tls/cert.pem',
  TLS_KEY_FILE: '/tls/key.pem',
  CURSOR_SECRET: 'x'.repeat(32),
  DATABASE_URL: 'postgres://envoi@127.0.0.1:5432/envoi',
  IDEMPOTENCY_ENCRYPTION_KEY: 'ab'.repeat(32),
  RATE_LIMIT_GENERAL_PER_SECOND: '5',
  RATE_LIMIT_GENERAL_BURST: '3',
  RATE_LIMIT_STATISTICS_PER_SECOND: '1',
  RATE_LIMIT_STATISTICS_BURST: '1',
  RATE_LIMIT_TRACKING_PER_SECOND: '1',
  RATE_LIMIT_TRACKING_BURST: '2',
  RATE_LIMIT_STORE_TIMEOUT_MS: String(STORE_TIMEOUT_MS),
  RATE_LIMIT_STORE_RETRY_MS: String(STORE_RETRY_MS),
};

type Take = (accountId: string, limitClass: string, limit: RateLimit) => Promise<GcraDecision>;

function setup(take: Take, fallback: 'local' | 'open' = 'local') {
  const config = loadConfig(GatewayConfig, { ...ENV, RATE_LIMIT_FALLBACK: fallback });
  const shared = { take: jest.fn<ReturnType<Take>, Parameters<Take>>(take) };
  const warn = jest.fn();
  const logger = { warn, error: jest.fn(), info: jest.fn(), debug: jest.fn() };
  const limiter = new RateLimiter(
    shared as unknown as SharedRateLimiter,
    config,
    logger as unknown as Logger,
  );
  return { limiter, shared, warn };
}

const ALLOW: GcraDecision = { allowed: true, tatMs: 0, retryAfterMs: 0 };
const DENY: GcraDecision = { allowed: false, tatMs: 0, retryAfterMs: 1_500 };

function request(config: EdgeRouteConfig, accountId: string | null = ACCOUNT_ID, ip = '192.0.2.1') {
  const principal =
    accountId === null ? undefined : ({ account_id: accountId } as unknown as Principal);
  return { principal, ip, routeOptions: { config } } as unknown as FastifyRequest;
}

async function allowedOf(limiter: RateLimiter, count: number, accountId = ACCOUNT_ID) {
  let allowed = 0;
  for (let i = 0; i < count; i += 1) {
    if ((await limiter.decide(accountId, 'general')).allowed) allowed += 1;
  }
  return allowed;
}

afterEach(() => {
  jest.useRealTimers();
});

describe('RateLimiter.onRequest', () => {
  it('lets an allowed request through', async () => {
    const { limiter, shared } = setup(() => Promise.resolve(ALLOW));
    await expect(limiter.onRequest(request({}))).resolves.toBeUndefined();
    expect(shared.take).toHaveBeenCalledWith(ACCOUNT_ID, 'general', { perSecond: 5, burst: 3 });
  });

  it('answers 429 with Retry-After in whole seconds', async () => {
    const { limiter } = setup(() => Promise.resolve(DENY));
    const error = await limiter.onRequest(request({})).then(
      () => undefined,
      (rejection: unknown) => rejection,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 429,
      message: RATE_LIMITED_MESSAGE,
      headers: { 'retry-after': '2' },
    });
  });

  it('counts statistics routes against the statistics limit', async () => {
    const { limiter, shared } = setup(() => Promise.resolve(ALLOW));
    await limiter.onRequest(request({ rateLimit: 'statistics' }));
    expect(shared.take).toHaveBeenCalledWith(ACCOUNT_ID, 'statistics', {
      perSecond: 1,
      burst: 1,
    });
  });

  it('does not limit unauthenticated (public) requests', async () => {
    const { limiter, shared } = setup(() => Promise.resolve(DENY));
    await expect(limiter.onRequest(request({ public: true }, null))).resolves.toBeUndefined();
    expect(shared.take).not.toHaveBeenCalled();
  });

  it('limits public routes that ask for it per client IP, in this replica', async () => {
    const { limiter, shared } = setup(() => Promise.resolve(ALLOW));
    const route = { public: true, perClientIpLimit: true };
    const outcome = (ip: string) =>
      limiter.onRequest(request(route, null, ip)).then(
        () => 'allowed',
        (error: unknown) => (error instanceof ApiError ? error.status : 'error'),
      );

    expect([
      await outcome('192.0.2.1'),
      await outcome('192.0.2.1'),
      await outcome('192.0.2.1'),
    ]).toEqual(['allowed', 'allowed', 429]);
    expect(await outcome('192.0.2.2')).toBe('allowed');
    expect(shared.take).not.toHaveBeenCalled();
  });
});

describe('RateLimiter.decide', () => {
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
