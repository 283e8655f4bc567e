import { ConfigError, loadConfig } from '@envoi/shared-config';

import { SuppressionsConfig } from './suppressions.config';

const BASE = {
  NATS_URL: 'nats://127.0.0.1:4222',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:5432/db',
};

describe('SuppressionsConfig', () => {
  it('has defaults for development', () => {
    expect(loadConfig(SuppressionsConfig, BASE)).toMatchObject({
      DATABASE_POOL_SIZE: 10,
      SUPPRESSION_AUTOMATIC_TTL_MS: 30 * 86_400_000,
      SUPPRESSION_PURGE_INTERVAL_MS: 600_000,
      SUPPRESSION_PURGE_BATCH: 1_000,
      OUTBOX_RELAY_INTERVAL_MS: 1_000,
      OUTBOX_RELAY_BATCH: 100,
    });
  });

  it('reads durations from the environment', () => {
    const config = loadConfig(SuppressionsConfig, {
      ...BASE,
      SUPPRESSION_AUTOMATIC_TTL_MS: '5000',
      SUPPRESSION_PURGE_INTERVAL_MS: '100',
    });
    expect(config.SUPPRESSION_AUTOMATIC_TTL_MS).toBe(5_000);
    expect(config.SUPPRESSION_PURGE_INTERVAL_MS).toBe(100);
  });

  it.each([
    [{ DATABASE_URL: undefined }, 'DATABASE_URL must be a postgres:// URL'],
    [{ SUPPRESSION_PURGE_BATCH: '0' }, 'SUPPRESSION_PURGE_BATCH must not be less than 1'],
    [{ SUPPRESSION_PURGE_INTERVAL_MS: 'soon' }, 'SUPPRESSION_PURGE_INTERVAL_MS must be an integer'],
    [{ SUPPRESSION_AUTOMATIC_TTL_MS: '10' }, 'SUPPRESSION_AUTOMATIC_TTL_MS must not be less than'],
  ])('refuses %j', (overrides, message) => {
    expect(() => loadConfig(SuppressionsConfig, { ...BASE, ...overrides })).toThrow(ConfigError);
    expect(() => loadConfig(SuppressionsConfig, { ...BASE, ...overrides })).toThrow(message);
  });
});
