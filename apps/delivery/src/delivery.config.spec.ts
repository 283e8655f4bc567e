import { ConfigError, loadConfig } from '@envoi/shared-config';

import { DeliveryConfig } from './delivery.config';

const BASE = {
  NATS_URL: 'nats://127.0.0.1:4222',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
  TRACKING_BASE_URL: 'https://mail.example.com',
  TRACKING_SECRET: 'a-tracking-secret-of-at-least-32-characters',
};

describe('DeliveryConfig', () => {
  it('has defaults for development', () => {
    expect(loadConfig(DeliveryConfig, BASE)).toMatchObject({
      DATABASE_POOL_SIZE: 10,
      DNS_TIMEOUT_MS: 3_000,
      DNS_TRIES: 2,
      OUTBOX_RELAY_INTERVAL_MS: 1_000,
      OUTBOX_RELAY_BATCH: 100,
    });
  });

  it('gives SMTP sessions a longer shutdown grace than the other services', () => {
    expect(loadConfig(DeliveryConfig, BASE).SHUTDOWN_GRACE_MS).toBe(10_000);
    expect(
      loadConfig(DeliveryConfig, { ...BASE, SHUTDOWN_GRACE_MS: '600000' }).SHUTDOWN_GRACE_MS,
    ).toBe(600_000);
    expect(() => loadConfig(DeliveryConfig, { ...BASE, SHUTDOWN_GRACE_MS: '600001' })).toThrow(
      ConfigError,
    );
  });

  it('needs the tracking base URL and a secret of 32 characters or more, as messages does', () => {
    expect(() => loadConfig(DeliveryConfig, { ...BASE, TRACKING_BASE_URL: '' })).toThrow(
      /TRACKING_BASE_URL/,
    );
    expect(() => loadConfig(DeliveryConfig, { ...BASE, TRACKING_SECRET: 'x'.repeat(31) })).toThrow(
      /TRACKING_SECRET/,
    );
  });

  it('claims attempts for 30 s by default, from 1 s up to 10 min', () => {
    expect(loadConfig(DeliveryConfig, BASE).DELIVERY_CLAIM_TTL_MS).toBe(30_000);
    expect(
      loadConfig(DeliveryConfig, { ...BASE, DELIVERY_CLAIM_TTL_MS: '3000' }).DELIVERY_CLAIM_TTL_MS,
    ).toBe(3_000);
    for (const value of ['999', '600001']) {
      expect(() => loadConfig(DeliveryConfig, { ...BASE, DELIVERY_CLAIM_TTL_MS: value })).toThrow(
        ConfigError,
      );
    }
  });

  it('reads 20 messages ahead of its slots by default, none when set to 0', () => {
    expect(loadConfig(DeliveryConfig, BASE).DELIVERY_READ_AHEAD).toBe(20);
    expect(
      loadConfig(DeliveryConfig, { ...BASE, DELIVERY_READ_AHEAD: '0' }).DELIVERY_READ_AHEAD,
    ).toBe(0);
    expect(() => loadConfig(DeliveryConfig, { ...BASE, DELIVERY_READ_AHEAD: '-1' })).toThrow(
      ConfigError,
    );
  });
});
