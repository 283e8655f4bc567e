import { ConfigError, loadConfig } from '@envoi/shared-config';

import { WebhooksConfig } from './webhooks.config';

const BASE = {
  NATS_URL: 'nats://127.0.0.1:4222',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  WEBHOOK_SECRET_ENCRYPTION_KEY: '0123456789abcdef'.repeat(4),
};

describe('WebhooksConfig', () => {
  it('has defaults for development', () => {
    expect(loadConfig(WebhooksConfig, BASE)).toMatchObject({
      DATABASE_POOL_SIZE: 10,
      HEALTH_PORT: 0,
      OUTBOX_RELAY_BATCH: 100,
      EVENTS_BATCH: 32,
      OUTBOUND_ALLOW_HTTP: false,
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_MAX_ATTEMPTS: 6,
      WEBHOOK_RETRY_BASE_MS: 1_000,
      WEBHOOK_DISABLE_AFTER_FAILURES: 100,
      WEBHOOK_ENDPOINT_CONCURRENCY: 4,
      WEBHOOK_DIRECT_WAIT_MS: 1_000,
      WEBHOOK_FAN_OUT_CONCURRENCY: 4,
      WEBHOOK_SUBSCRIPTION_CACHE_TTL_MS: 10_000,
    });
  });

  it('reads OUTBOUND_ALLOW_HTTP', () => {
    expect(loadConfig(WebhooksConfig, { ...BASE, OUTBOUND_ALLOW_HTTP: 'true' })).toMatchObject({
      OUTBOUND_ALLOW_HTTP: true,
    });
  });

  it.each([
    [{ DATABASE_URL: undefined }, 'DATABASE_URL must be a postgres:// URL'],
    [{ NATS_URL: 'http://127.0.0.1' }, 'NATS_URL must be one or more nats:// URLs'],
    [
      { WEBHOOK_SECRET_ENCRYPTION_KEY: undefined },
      'WEBHOOK_SECRET_ENCRYPTION_KEY must be 64 hexadecimal characters',
    ],
    [
      { WEBHOOK_SECRET_ENCRYPTION_KEY: 'ab'.repeat(16) },
      'WEBHOOK_SECRET_ENCRYPTION_KEY must be 64 hexadecimal characters',
    ],
    [{ OUTBOUND_ALLOW_HTTP: 'yes' }, 'OUTBOUND_ALLOW_HTTP must be true or false'],
    [{ WEBHOOK_MAX_ATTEMPTS: '0' }, 'WEBHOOK_MAX_ATTEMPTS'],
  ])('refuses %j', (overrides, message) => {
    expect(() => loadConfig(WebhooksConfig, { ...BASE, ...overrides })).toThrow(ConfigError);
    expect(() => loadConfig(WebhooksConfig, { ...BASE, ...overrides })).toThrow(message);
  });
});
