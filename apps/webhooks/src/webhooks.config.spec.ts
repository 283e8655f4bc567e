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
  ])('refuses %j', (overrides, message) => {
    expect(() => loadConfig(WebhooksConfig, { ...BASE, ...overrides })).toThrow(ConfigError);
    expect(() => loadConfig(WebhooksConfig, { ...BASE, ...overrides })).toThrow(message);
  });
});
