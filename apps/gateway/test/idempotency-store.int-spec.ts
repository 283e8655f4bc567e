import { randomBytes } from 'node:crypto';

import { pollUntil } from '@envoi/shared-testing';

import type { GatewayDatabase } from '../src/database/gateway-database';
import {
  type ClaimResult,
  type IdempotencyClaim,
  IdempotencyRepository,
  type StoredOutcome,
} from '../src/idempotency/idempotency.repository';
import { requestFingerprint } from '../src/idempotency/idempotency-policy';
import { IdempotencyStore } from '../src/idempotency/idempotency-store';
import {
  gatewayTestConfig,
  migrateGatewaySchema,
  newAccountId,
  openDatabase,
} from './gateway-test-support';

const LONG_LEASE_MS = 60_000;
const SHORT_LEASE_MS = 300;
const DAY_MS = 86_400_000;

const fingerprint = requestFingerprint(
  'POST',
  '/v2/accounts/x/api-keys',
  Buffer.from('{"label":"a"}'),
);

function outcome(overrides: Partial<StoredOutcome> = {}): StoredOutcome {
  return {
    statusCode: 201,
    contentType: 'application/json; charset=utf-8',
    body: randomBytes(64),
    encrypted: false,
    ttlMs: DAY_MS,
    ...overrides,
  };
}

function claimOf(result: ClaimResult): IdempotencyClaim {
  if (result.kind !== 'claimed') throw new Error(`expected a claim, got ${result.kind}`);
  return result.claim;
}

describe('IdempotencyStore against PostgreSQL', () => {
  let database: GatewayDatabase | undefined;
  let store: IdempotencyStore;

  beforeAll(async () => {
    await migrateGatewaySchema();
    database = openDatabase(gatewayTestConfig({ DATABASE_POOL_SIZE: '20' }));
    store = new IdempotencyStore(new IdempotencyRepository(database));
  });

  afterAll(async () => {
    await database?.onApplicationShutdown();
  });

  async function rowsOf(accountId: string) {
    const result = await database?.query<{
      idempotency_key: string;
      state: string;
      status_code: number | null;
      response_body: Buffer | null;
      expired: boolean;
    }>(
      `SELECT idempotency_key, state, status_code, response_body,
              expires_at <= clock_timestamp() AS expired
       FROM "gateway"."idempotency_records" WHERE account_id = $1 ORDER BY idempotency_key`,
      [accountId],
    );
    return result?.rows ?? [];
  }

  it('lets exactly one of 50 concurrent claims of a key win', async () => {
    const accountId = newAccountId();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS)),
    );
    const winners = results.filter((result) => result.kind === 'claimed');
    expect(winners).toHaveLength(1);
    for (const result of results) {
      if (result.kind === 'existing') {
        expect(result.record).toMatchObject({ ...fingerprint, state: 'executing' });
        expect(result.record.secondsLeft).toBeGreaterThan(0);
      }
    }
    expect(await rowsOf(accountId)).toHaveLength(1);
  });

  it('returns the completed outcome with the exact bytes to a later claim', async () => {
    const accountId = newAccountId();
    const claim = claimOf(await store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS));
    const stored = outcome({ body: Buffer.from([0, 1, 2, 255, 0x7b, 0x7d, 0]) });
    await expect(store.complete(claim, stored)).resolves.toBe(true);
    const result = await store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS);
    expect(result).toEqual({
      kind: 'existing',
      record: {
        ...fingerprint,
        state: 'completed',
        secondsLeft: expect.any(Number) as unknown,
        statusCode: 201,
        contentType: 'application/json; charset=utf-8',
        responseBody: stored.body,
        encrypted: false,
      },
    });
    if (result.kind !== 'existing') throw new Error('unreachable');
    expect(result.record.responseBody?.equals(stored.body)).toBe(true);
    // The replay lifetime, not the lease, now bounds the record.
    expect(result.record.secondsLeft).toBeGreaterThan(LONG_LEASE_MS / 1000);
    expect(result.record.secondsLeft).toBeLessThanOrEqual(DAY_MS / 1000);
  });

  it('keeps a record that another claim holds, whatever its fingerprint', async () => {
    const accountId = newAccountId();
    claimOf(await store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS));
    const other = { ...fingerprint, method: 'PUT', bodySha256: 'f'.repeat(64) };
    const result = await store.claim(accountId, 'k', other, LONG_LEASE_MS);
    expect(result).toMatchObject({ kind: 'existing', record: { ...fingerprint } });
  });

  it('frees a released key for the next claim', async () => {
    const accountId = newAccountId();
    const first = claimOf(await store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS));
    expect((await store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS)).kind).toBe('existing');
    await store.release(first);
    expect(await rowsOf(accountId)).toHaveLength(0);
    const second = claimOf(await store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS));
    expect(second.token).not.toBe(first.token);
  });

  it('ignores a release or hold by a claim that does not own the key', async () => {
    const accountId = newAccountId();
    const owner = claimOf(await store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS));
    const impostor: IdempotencyClaim = { ...owner, token: '00000000-0000-4000-8000-000000000000' };
    await store.release(impostor);
    await store.hold(impostor);
    await expect(store.complete(impostor, outcome())).resolves.toBe(false);
    expect(await rowsOf(accountId)).toMatchObject([{ state: 'executing', status_code: null }]);
  });

  it('keeps a held key in progress until its lease ends, then lets a claim take it', async () => {
    const accountId = newAccountId();
    const leaseMs = 1_000;
    const startedAt = Date.now();
    const first = claimOf(await store.claim(accountId, 'k', fingerprint, leaseMs));
    await store.hold(first);
    const held = await store.claim(accountId, 'k', fingerprint, leaseMs);
    expect(held).toMatchObject({
      kind: 'existing',
      record: { state: 'held', statusCode: null, responseBody: null },
    });
    if (held.kind !== 'existing') throw new Error('unreachable');
    expect(held.record.secondsLeft).toBe(1);
    const taken = await pollUntil(
      () => store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS),
      (result) => result.kind === 'claimed',
      { what: 'the held key to be claimable', intervalMs: 50 },
    );
    // Not before the lease ended (the database and this process share one clock).
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(leaseMs - 20);
    expect(claimOf(taken).token).not.toBe(first.token);
  });

  it('lets a new claim take over an expired lease; the old claim then changes nothing', async () => {
    const accountId = newAccountId();
    const old = claimOf(await store.claim(accountId, 'k', fingerprint, SHORT_LEASE_MS));
    const other = { ...fingerprint, bodySha256: 'a'.repeat(64) };
    const takeover = claimOf(
      await pollUntil(
        () => store.claim(accountId, 'k', other, LONG_LEASE_MS),
        (result) => result.kind === 'claimed',
        { what: 'the lease to expire', intervalMs: 25 },
      ),
    );
    await expect(store.complete(old, outcome({ statusCode: 400 }))).resolves.toBe(false);
    await store.hold(old);
    await store.release(old);
    expect(await rowsOf(accountId)).toMatchObject([{ state: 'executing', status_code: null }]);
    const body = Buffer.from('{"winner":true}');
    await expect(store.complete(takeover, outcome({ body }))).resolves.toBe(true);
    const replay = await store.claim(accountId, 'k', other, LONG_LEASE_MS);
    expect(replay).toMatchObject({
      kind: 'existing',
      record: { state: 'completed', bodySha256: other.bodySha256, responseBody: body },
    });
  });

  it('lets a claim take over a completed record once its replay lifetime ends', async () => {
    const accountId = newAccountId();
    const first = claimOf(await store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS));
    await store.complete(first, outcome({ ttlMs: SHORT_LEASE_MS }));
    const second = await pollUntil(
      () => store.claim(accountId, 'k', fingerprint, LONG_LEASE_MS),
      (result) => result.kind === 'claimed',
      { what: 'the replay lifetime to end', intervalMs: 25 },
    );
    expect(claimOf(second).token).not.toBe(first.token);
    expect(await rowsOf(accountId)).toMatchObject([
      { state: 'executing', status_code: null, response_body: null },
    ]);
  });

  it('purges expired records only', async () => {
    const accountId = newAccountId();
    const live = claimOf(await store.claim(accountId, 'live', fingerprint, LONG_LEASE_MS));
    const done = claimOf(await store.claim(accountId, 'done', fingerprint, LONG_LEASE_MS));
    await store.complete(done, outcome());
    const lapsed = claimOf(await store.claim(accountId, 'lapsed', fingerprint, SHORT_LEASE_MS));
    const shortDone = claimOf(await store.claim(accountId, 'short', fingerprint, LONG_LEASE_MS));
    await store.complete(shortDone, outcome({ ttlMs: SHORT_LEASE_MS }));
    await store.hold(lapsed);
    await pollUntil(
      () => rowsOf(accountId),
      (rows) => rows.filter((row) => row.expired).length === 2,
      { what: 'two records to expire' },
    );
    // Other suites share the table: purge until a batch comes back short.
    let purged = 0;
    for (let batch = 0; batch < 100; batch += 1) {
      const deleted = await store.purgeExpired(100);
      purged += deleted;
      if (deleted < 100) break;
    }
    expect(purged).toBeGreaterThanOrEqual(2);
    expect((await rowsOf(accountId)).map((row) => row.idempotency_key)).toEqual(['done', 'live']);
    expect(live.key).toBe('live');
  });

  it('keeps the same key of two accounts apart', async () => {
    const accountA = newAccountId();
    const accountB = newAccountId();
    const claimA = claimOf(await store.claim(accountA, 'shared-key', fingerprint, LONG_LEASE_MS));
    const claimB = claimOf(await store.claim(accountB, 'shared-key', fingerprint, LONG_LEASE_MS));
    await store.complete(claimA, outcome({ body: Buffer.from('A') }));
    await store.complete(claimB, outcome({ body: Buffer.from('B'), statusCode: 400 }));
    await expect(
      store.claim(accountA, 'shared-key', fingerprint, LONG_LEASE_MS),
    ).resolves.toMatchObject({ record: { statusCode: 201, responseBody: Buffer.from('A') } });
    await expect(
      store.claim(accountB, 'shared-key', fingerprint, LONG_LEASE_MS),
    ).resolves.toMatchObject({ record: { statusCode: 400, responseBody: Buffer.from('B') } });
    await store.release(claimA);
    expect(await rowsOf(accountB)).toHaveLength(1);
  });

  it('stores a key of 255 characters', async () => {
    const accountId = newAccountId();
    const key = 'k'.repeat(255);
    const claim = claimOf(await store.claim(accountId, key, fingerprint, LONG_LEASE_MS));
    await expect(store.complete(claim, outcome())).resolves.toBe(true);
    expect(await rowsOf(accountId)).toMatchObject([{ idempotency_key: key }]);
  });
});
