import { loadConfig } from '@envoi/shared-config';
import { PERIODIC_JOB, type PeriodicJobDeclaration } from '@envoi/shared-jobs';
import type { Logger } from '@envoi/shared-observability';

import { GatewayConfig } from '../gateway.config';
import { IdempotencyPurger } from './idempotency-purger.service';
import type { IdempotencyStore } from './idempotency-store';

const PURGE_INTERVAL_MS = 1_000;

const config = loadConfig(GatewayConfig, {
  NATS_URL: 'nats://127.0.0.1:4222',
  TLS_CERT_FILE: '/tls/cert.pem',
  TLS_KEY_FILE: '/tls/key.pem',
  CURSOR_SECRET: 'x'.repeat(32),
  DATABASE_URL: 'postgres://envoi@127.0.0.1:5432/envoi',
  IDEMPOTENCY_ENCRYPTION_KEY: 'ab'.repeat(32),
  IDEMPOTENCY_PURGE_INTERVAL_MS: String(PURGE_INTERVAL_MS),
});

function setup(deletions: Array<number | Error>) {
  const purgeExpired = jest.fn<Promise<number>, [number]>(() => {
    const next = deletions.shift() ?? 0;
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  });
  const logger = { warn: jest.fn(), error: jest.fn(), info: jest.fn(), debug: jest.fn() };
  const purger = new IdempotencyPurger(
    { purgeExpired } as unknown as IdempotencyStore,
    logger as unknown as Logger,
  );
  return { purger, purgeExpired, logger };
}

describe('IdempotencyPurger.purge', () => {
  it('deletes in batches until a batch comes back short', async () => {
    const { purger, purgeExpired, logger } = setup([1_000, 1_000, 3]);
    await purger.purge();
    expect(purgeExpired).toHaveBeenCalledTimes(3);
    expect(purgeExpired).toHaveBeenCalledWith(1_000);
    expect(logger.debug).toHaveBeenCalledWith({ deleted: 2_003 }, expect.any(String));
  });

  it('stops after its batch budget even when more is left', async () => {
    const { purger, purgeExpired } = setup(Array.from({ length: 80 }, () => 1_000));
    await purger.purge();
    expect(purgeExpired).toHaveBeenCalledTimes(50);
  });

  it('stays quiet when nothing expired', async () => {
    const { purger, purgeExpired, logger } = setup([0]);
    await purger.purge();
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    expect(logger.debug).not.toHaveBeenCalled();
  });
});

describe('IdempotencyPurger job', () => {
  it('runs every IDEMPOTENCY_PURGE_INTERVAL_MS', () => {
    const declaration = Reflect.getMetadata(PERIODIC_JOB, IdempotencyPurger.prototype.purge) as
      PeriodicJobDeclaration<GatewayConfig> | undefined;
    expect(declaration?.intervalMs(config)).toBe(PURGE_INTERVAL_MS);
  });
});
