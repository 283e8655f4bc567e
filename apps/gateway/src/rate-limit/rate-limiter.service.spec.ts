import { loadConfig } from '@envoi/shared-config';
import type { GcraDecision } from '@envoi/shared-edge';
import type { RpcClient } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import type { FastifyRequest } from 'fastify';
import type { NatsConnection } from 'nats';

import type { Principal } from '../auth/principal';
import { ApiError } from '../errors/api-error';
import { GatewayConfig } from '../gateway.config';
import type { EdgeRouteConfig } from '../http/edge-route';
import { RATE_LIMITED_MESSAGE, RateLimiter } from './rate-limiter.service';
import { ReplicaRateLimits } from './replica-rate-limits.service';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';

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
};

type Decide = () => GcraDecision;

/** A limiter whose replicated decisions `decide` makes (NATS is never touched: no onModuleInit). */
function setup(decide: Decide) {
  const config = loadConfig(GatewayConfig, ENV);
  const logger = { warn: jest.fn(), error: jest.fn(), info: jest.fn(), debug: jest.fn() };
  const replicas = new ReplicaRateLimits(
    config,
    {} as NatsConnection,
    {} as RpcClient,
    logger as unknown as Logger,
  );
  const shared = { take: jest.spyOn(replicas.limiter, 'take').mockImplementation(decide) };
  return { limiter: new RateLimiter(replicas, config), shared };
}

const ALLOW: GcraDecision = { allowed: true, tatMs: 0, retryAfterMs: 0 };
const DENY: GcraDecision = { allowed: false, tatMs: 0, retryAfterMs: 1_500 };

function request(config: EdgeRouteConfig, accountId: string | null = ACCOUNT_ID, ip = '192.0.2.1') {
  const principal =
    accountId === null ? undefined : ({ account_id: accountId } as unknown as Principal);
  return { principal, ip, routeOptions: { config } } as unknown as FastifyRequest;
}

describe('RateLimiter.onRequest', () => {
  it('lets an allowed request through, deciding with the other replicas', async () => {
    const { limiter, shared } = setup(() => ALLOW);
    await expect(limiter.onRequest(request({}))).resolves.toBeUndefined();
    expect(shared.take).toHaveBeenCalledWith(ACCOUNT_ID, 'general');
  });

  it('answers 429 with Retry-After in whole seconds', async () => {
    const { limiter } = setup(() => DENY);
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
    const { limiter, shared } = setup(() => ALLOW);
    await limiter.onRequest(request({ rateLimit: 'statistics' }));
    expect(shared.take).toHaveBeenCalledWith(ACCOUNT_ID, 'statistics');
  });

  it('does not limit unauthenticated (public) requests', async () => {
    const { limiter, shared } = setup(() => DENY);
    await expect(limiter.onRequest(request({ public: true }, null))).resolves.toBeUndefined();
    expect(shared.take).not.toHaveBeenCalled();
  });

  it('limits public routes that ask for it per client IP, in this replica', async () => {
    const { limiter, shared } = setup(() => ALLOW);
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
