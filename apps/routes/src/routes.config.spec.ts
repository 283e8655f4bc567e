import { ConfigError, loadConfig } from '@envoi/shared-config';

import { RoutesConfig } from './routes.config';

const BASE = {
  NATS_URL: 'nats://127.0.0.1:4222',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  ROUTE_SECRET_ENCRYPTION_KEY: '0123456789abcdef'.repeat(4),
};

describe('RoutesConfig', () => {
  it('has defaults for development', () => {
    expect(loadConfig(RoutesConfig, BASE)).toMatchObject({
      DATABASE_POOL_SIZE: 10,
      HEALTH_PORT: 0,
      OUTBOX_RELAY_BATCH: 100,
      EVENTS_BATCH: 32,
      OUTBOUND_ALLOW_HTTP: false,
      ROUTES_DOMAIN_CACHE_TTL_MS: 10_000,
      ROUTE_TIMEOUT_MS: 10_000,
      ROUTE_MAX_ATTEMPTS: 11,
      ROUTE_RETRY_BASE_MS: 1_000,
      ROUTE_DISABLE_AFTER_FAILURES: 100,
    });
  });

  it.each([
    [{ DATABASE_URL: undefined }, 'DATABASE_URL must be a postgres:// URL'],
    [{ NATS_URL: 'http://127.0.0.1' }, 'NATS_URL must be one or more nats:// URLs'],
    [
      { ROUTE_SECRET_ENCRYPTION_KEY: undefined },
      'ROUTE_SECRET_ENCRYPTION_KEY must be 64 hexadecimal characters',
    ],
    [{ ROUTES_DOMAIN_CACHE_TTL_MS: '-1' }, 'ROUTES_DOMAIN_CACHE_TTL_MS'],
  ])('refuses %j', (overrides, message) => {
    expect(() => loadConfig(RoutesConfig, { ...BASE, ...overrides })).toThrow(ConfigError);
    expect(() => loadConfig(RoutesConfig, { ...BASE, ...overrides })).toThrow(message);
  });
});
