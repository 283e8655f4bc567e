import { periodMs } from '@envoi/shared-edge';
import type { Logger } from '@envoi/shared-observability';
import { pollUntil } from '@envoi/shared-testing';

import type { GatewayDatabase } from '../src/database/gateway-database';
import type { GatewayConfig } from '../src/gateway.config';
import type { RateLimitClass } from '../src/http/edge-route';
import { RateLimitRepository } from '../src/rate-limit/rate-limit.repository';
import { RATE_LIMITED_MESSAGE, RateLimiter } from '../src/rate-limit/rate-limiter.service';
import { SharedRateLimiter } from '../src/rate-limit/shared-rate-limiter';
import { type EdgeTestApp, startEdgeTestApp, THINGS } from './edge-test-app';
import {
  closedLoopbackPort,
  gatewayTestConfig,
  type HangingServer,
  migrateGatewaySchema,
  newAccountId,
  openDatabase,
  silentLogger,
  startHangingServer,
} from './gateway-test-support';

const GENERAL = { perSecond: 5, burst: 10 };
const STATISTICS = { perSecond: 1, burst: 1 };
const LIMITS = {
  RATE_LIMIT_GENERAL_PER_SECOND: String(GENERAL.perSecond),
  RATE_LIMIT_GENERAL_BURST: String(GENERAL.burst),
  RATE_LIMIT_STATISTICS_PER_SECOND: String(STATISTICS.perSecond),
  RATE_LIMIT_STATISTICS_BURST: String(STATISTICS.burst),
};

/** The most a bucket can let through in `elapsedMs`: its burst plus what refilled meanwhile. */
function ceilingFor(limit: { perSecond: number; burst: number }, elapsedMs: number): number {
  return limit.burst + Math.floor(elapsedMs / periodMs(limit)) + 1;
}

interface Replica {
  limiter: RateLimiter;
  database: GatewayDatabase;
  warnings: jest.SpyInstance;
}

function startReplica(config: GatewayConfig): Replica {
  const database = openDatabase(config);
  const logger: Logger = silentLogger();
  const warnings = jest.spyOn(logger, 'warn');
  return {
    limiter: new RateLimiter(
      new SharedRateLimiter(new RateLimitRepository(database)),
      config,
      logger,
    ),
    database,
    warnings,
  };
}

/** Runs `count` decisions, sequentially or all at once, and measures how long they took. */
async function burst(
  replicas: Replica[],
  accountId: string,
  limitClass: RateLimitClass,
  count: number,
  parallel: boolean,
) {
  const startedAt = Date.now();
  const decide = (i: number) => {
    const replica = replicas[i % replicas.length];
    if (!replica) throw new Error('no replica');
    return replica.limiter.decide(accountId, limitClass);
  };
  const decisions = [];
  if (parallel) {
    decisions.push(...(await Promise.all(Array.from({ length: count }, (_, i) => decide(i)))));
  } else {
    for (let i = 0; i < count; i += 1) decisions.push(await decide(i));
  }
  const elapsedMs = Date.now() - startedAt;
  return {
    decisions,
    elapsedMs,
    allowed: decisions.filter((decision) => decision.allowed).length,
    denied: decisions.filter((decision) => !decision.allowed),
  };
}

describe('rate limits shared by two replicas', () => {
  let replicas: Replica[] = [];

  beforeAll(async () => {
    await migrateGatewaySchema();
    // A generous store timeout: these tests are about the shared store, never the fallback.
    const config = gatewayTestConfig({ ...LIMITS, RATE_LIMIT_STORE_TIMEOUT_MS: '10000' });
    replicas = [startReplica(config), startReplica(config)];
  });

  afterAll(async () => {
    for (const replica of replicas) await replica.database.onApplicationShutdown();
  });

  afterEach(() => {
    for (const replica of replicas) expect(replica.warnings).not.toHaveBeenCalled();
  });

  it.each([
    ['one after another', false],
    ['all at once', true],
  ])('let the burst through together, not once each (%s)', async (_how, parallel) => {
    const accountId = newAccountId();
    const result = await burst(replicas, accountId, 'general', 30, parallel);
    expect(result.allowed).toBeGreaterThanOrEqual(GENERAL.burst);
    expect(result.allowed).toBeLessThanOrEqual(ceilingFor(GENERAL, result.elapsedMs));
    expect(result.denied.length).toBeGreaterThan(0);
    for (const denial of result.denied) {
      expect(denial.retryAfterMs).toBeGreaterThan(0);
      expect(denial.retryAfterMs).toBeLessThanOrEqual(periodMs(GENERAL) + 50);
    }
    if (!parallel) {
      expect(result.decisions.slice(0, GENERAL.burst).every((d) => d.allowed)).toBe(true);
    }
  });

  it('count the requests of one replica against the other', async () => {
    const accountId = newAccountId();
    const [first, second] = replicas as [Replica, Replica];
    const startedAt = Date.now();
    const fromFirst = await burst([first], accountId, 'general', GENERAL.burst, false);
    expect(fromFirst.allowed).toBe(GENERAL.burst);
    const fromSecond = await burst([second], accountId, 'general', 5, false);
    const elapsedMs = Date.now() - startedAt;
    expect(fromFirst.allowed + fromSecond.allowed).toBeLessThanOrEqual(
      ceilingFor(GENERAL, elapsedMs),
    );
    expect(fromSecond.denied.length).toBeGreaterThan(0);
  });

  it('keep the statistics limit apart from the general one', async () => {
    const accountId = newAccountId();
    const general = await burst(replicas, accountId, 'general', 20, false);
    expect(general.denied.length).toBeGreaterThan(0);
    const statistics = await burst(replicas, accountId, 'statistics', 5, false);
    expect(statistics.decisions[0]?.allowed).toBe(true);
    expect(statistics.allowed).toBeLessThanOrEqual(ceilingFor(STATISTICS, statistics.elapsedMs));
    for (const denial of statistics.denied) {
      expect(denial.retryAfterMs).toBeGreaterThan(0);
      expect(denial.retryAfterMs).toBeLessThanOrEqual(1000);
    }
    // The statistics requests took nothing from the general bucket, and the reverse.
    const otherAccount = newAccountId();
    const onlyStatistics = await burst(replicas, otherAccount, 'statistics', 3, false);
    expect(onlyStatistics.decisions[0]?.allowed).toBe(true);
    const thenGeneral = await burst(replicas, otherAccount, 'general', GENERAL.burst, false);
    expect(thenGeneral.allowed).toBe(GENERAL.burst);
  });

  it('keep accounts independent', async () => {
    const exhausted = newAccountId();
    const fresh = newAccountId();
    const first = await burst(replicas, exhausted, 'general', 20, true);
    expect(first.denied.length).toBeGreaterThan(0);
    const second = await burst(replicas, fresh, 'general', GENERAL.burst, true);
    expect(second.allowed).toBe(GENERAL.burst);
  });

  it('keep one row per account and limit class', async () => {
    const accountId = newAccountId();
    await burst(replicas, accountId, 'general', 3, true);
    await burst(replicas, accountId, 'statistics', 3, true);
    const rows = await replicas[0]?.database.query<{ limit_class: string }>(
      `SELECT limit_class FROM "gateway"."rate_limit_buckets" WHERE account_id = $1
       ORDER BY limit_class`,
      [accountId],
    );
    expect(rows?.rows).toEqual([{ limit_class: 'general' }, { limit_class: 'statistics' }]);
  });
});

describe('rate limits through real HTTP', () => {
  const limit = { perSecond: 1, burst: 2 };
  let app: EdgeTestApp | undefined;

  beforeAll(async () => {
    await migrateGatewaySchema();
    app = await startEdgeTestApp(
      gatewayTestConfig({
        RATE_LIMIT_GENERAL_PER_SECOND: String(limit.perSecond),
        RATE_LIMIT_GENERAL_BURST: String(limit.burst),
        RATE_LIMIT_STORE_TIMEOUT_MS: '10000',
      }),
    );
  });

  afterAll(async () => {
    await app?.close();
  });

  it('answers 429 with Retry-After before the handler or the idempotency layer runs', async () => {
    if (!app) throw new Error('the edge test app did not start');
    const edge = app;
    const accountId = newAccountId();
    const startedAt = Date.now();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const response = await edge.send('POST', `/v2/accounts/${accountId}/plain`, {
        accountId,
        body: '{}',
      });
      statuses.push(response.status);
    }
    const limited = await edge.send('POST', THINGS(accountId), {
      accountId,
      key: 'limited',
      body: '{}',
    });
    const elapsedMs = Date.now() - startedAt;
    const passed = statuses.filter((status) => status === 201).length;
    expect(passed).toBeGreaterThanOrEqual(limit.burst);
    expect(passed).toBeLessThanOrEqual(ceilingFor(limit, elapsedMs));
    expect(statuses.slice(0, limit.burst)).toEqual([201, 201]);
    if (elapsedMs < periodMs(limit)) {
      expect(statuses.slice(limit.burst)).toEqual([429, 429]);
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
      expect(limited.headers['idempotent-replayed']).toBeUndefined();
      expect(limited.json()).toEqual({ message: RATE_LIMITED_MESSAGE });
      expect(edge.executions(accountId, 'things')).toBe(0);
      const records = await edge.database.query(
        `SELECT 1 FROM "gateway"."idempotency_records" WHERE account_id = $1`,
        [accountId],
      );
      expect(records.rowCount).toBe(0);
    }
  });

  it('does not limit another account', async () => {
    if (!app) throw new Error('the edge test app did not start');
    const edge = app;
    const busy = newAccountId();
    for (let i = 0; i < 4; i += 1) {
      await edge.send('POST', `/v2/accounts/${busy}/plain`, { accountId: busy, body: '{}' });
    }
    const other = newAccountId();
    const response = await edge.send('POST', `/v2/accounts/${other}/plain`, {
      accountId: other,
      body: '{}',
    });
    expect(response.status).toBe(201);
  });
});

describe('rate limits while the shared store is down', () => {
  const fallbackLimits = {
    ...LIMITS,
    RATE_LIMIT_STORE_RETRY_MS: '600000',
  };

  async function unreachableConfig(overrides: Record<string, string>): Promise<GatewayConfig> {
    const port = await closedLoopbackPort();
    return gatewayTestConfig({
      ...fallbackLimits,
      DATABASE_URL: `postgres://envoi@127.0.0.1:${port}/envoi`,
      ...overrides,
    });
  }

  it('enforces the limits per process with the local fallback', async () => {
    const replica = startReplica(await unreachableConfig({ RATE_LIMIT_FALLBACK: 'local' }));
    try {
      const accountId = newAccountId();
      const result = await burst([replica], accountId, 'general', 30, false);
      expect(result.allowed).toBeGreaterThanOrEqual(GENERAL.burst);
      expect(result.allowed).toBeLessThanOrEqual(ceilingFor(GENERAL, result.elapsedMs));
      for (const denial of result.denied) expect(denial.retryAfterMs).toBeGreaterThan(0);
      const statistics = await burst([replica], accountId, 'statistics', 3, false);
      expect(statistics.decisions[0]?.allowed).toBe(true);
      expect(statistics.allowed).toBeLessThanOrEqual(ceilingFor(STATISTICS, statistics.elapsedMs));
      const other = await burst([replica], newAccountId(), 'general', GENERAL.burst, false);
      expect(other.allowed).toBe(GENERAL.burst);
      // One failed attempt switched to the fallback for the retry period.
      expect(replica.warnings).toHaveBeenCalledTimes(1);
    } finally {
      await replica.database.onApplicationShutdown();
    }
  });

  it('allows everything with the open fallback', async () => {
    const replica = startReplica(await unreachableConfig({ RATE_LIMIT_FALLBACK: 'open' }));
    try {
      const result = await burst([replica], newAccountId(), 'general', 30, false);
      expect(result.allowed).toBe(30);
      const statistics = await burst([replica], newAccountId(), 'statistics', 5, true);
      expect(statistics.allowed).toBe(5);
    } finally {
      await replica.database.onApplicationShutdown();
    }
  });

  describe('when the store accepts connections and never answers', () => {
    let hanging: HangingServer | undefined;
    let replica: Replica | undefined;

    beforeAll(async () => {
      hanging = await startHangingServer();
    });

    afterAll(async () => {
      await hanging?.close();
      await replica?.database.onApplicationShutdown();
    });

    function hangingConfig(overrides: Record<string, string>): GatewayConfig {
      return gatewayTestConfig({
        ...fallbackLimits,
        DATABASE_URL: `postgres://envoi@127.0.0.1:${hanging?.port ?? 0}/envoi`,
        RATE_LIMIT_STORE_TIMEOUT_MS: '100',
        ...overrides,
      });
    }

    it('gives up after RATE_LIMIT_STORE_TIMEOUT_MS and decides locally', async () => {
      replica = startReplica(hangingConfig({ RATE_LIMIT_STORE_RETRY_MS: '100' }));
      const accountId = newAccountId();
      const first = await replica.limiter.decide(accountId, 'general');
      expect(first.allowed).toBe(true);
      // The store was asked and is still silent: the answer came from the timeout.
      await pollUntil(
        () => hanging?.openConnections() ?? 0,
        (open) => open >= 1,
        { what: 'the store connection to be accepted' },
      );
      expect(replica.warnings).toHaveBeenCalledTimes(1);
      const [context] = replica.warnings.mock.calls[0] as [{ err: Error; fallback: string }];
      expect(context.fallback).toBe('local');
      expect(context.err.message).toBe('rate limit store slower than 100 ms');

      const result = await burst([replica], accountId, 'general', 30, false);
      expect(result.allowed + 1).toBeLessThanOrEqual(ceilingFor(GENERAL, result.elapsedMs));
      expect(result.denied.length).toBeGreaterThan(0);
    });

    it('asks the store again once RATE_LIMIT_STORE_RETRY_MS has passed', async () => {
      if (!replica) throw new Error('the previous test did not start the replica');
      const active = replica;
      const before = active.warnings.mock.calls.length;
      await pollUntil(
        async () => {
          await active.limiter.decide(newAccountId(), 'general');
          return active.warnings.mock.calls.length;
        },
        (warnings) => warnings > before,
        { what: 'another attempt at the store', intervalMs: 50 },
      );
      const [context] = active.warnings.mock.calls[before] as [{ err: Error }];
      expect(context.err.message).toBe('rate limit store slower than 100 ms');
    });
  });
});
