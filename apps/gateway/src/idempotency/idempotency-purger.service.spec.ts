import { loadConfig } from '@envoi/shared-config';
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
    config,
    logger as unknown as Logger,
  );
  return { purger, purgeExpired, logger };
}

afterEach(() => {
  jest.useRealTimers();
});

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

  it('logs a failure instead of throwing', async () => {
    const { purger, logger } = setup([new Error('database gone')]);
    await expect(purger.purge()).resolves.toBeUndefined();
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });
});

describe('IdempotencyPurger schedule', () => {
  it('purges every interval after bootstrap and stops at shutdown', async () => {
    jest.useFakeTimers();
    const { purger, purgeExpired } = setup([]);
    purger.onApplicationBootstrap();
    expect(purgeExpired).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    await jest.advanceTimersByTimeAsync(PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
    await purger.onApplicationShutdown();
    await jest.advanceTimersByTimeAsync(5 * PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(2);
  });

  it('never runs two purges at once and waits for the running one at shutdown', async () => {
    jest.useFakeTimers();
    let finish: (deleted: number) => void = () => undefined;
    const { purger, purgeExpired } = setup([]);
    purgeExpired.mockImplementation(() => new Promise<number>((resolve) => (finish = resolve)));
    purger.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(3 * PURGE_INTERVAL_MS);
    expect(purgeExpired).toHaveBeenCalledTimes(1);
    let stopped = false;
    const stopping = purger.onApplicationShutdown().then(() => (stopped = true));
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish(0);
    await stopping;
    expect(stopped).toBe(true);
  });
});
