import { pollUntil } from '@envoi/shared-testing';

import { IDEMPOTENCY_MESSAGES } from '../src/idempotency/idempotency-policy';
import { type EdgeTestApp, startEdgeTestApp, THINGS } from './edge-test-app';
import {
  gatewayTestConfig,
  migrateGatewaySchema,
  newAccountId,
  type TestResponse,
} from './gateway-test-support';

/** Generous limits: this suite is about idempotency, not rate limits. */
const GENEROUS_LIMITS = {
  RATE_LIMIT_GENERAL_PER_SECOND: '100000',
  RATE_LIMIT_GENERAL_BURST: '100000',
};
const SECRET_TTL_MS = 120_000;
const SHORT_LEASE_MS = 2_000;

const REPLAYED = 'idempotent-replayed';

function expectFresh(response: TestResponse, status: number): void {
  expect(response.status).toBe(status);
  expect(response.headers[REPLAYED]).toBeUndefined();
}

function expectReplayOf(response: TestResponse, original: TestResponse): void {
  expect(response.status).toBe(original.status);
  expect(response.headers[REPLAYED]).toBe('true');
  expect(response.headers['content-type']).toBe(original.headers['content-type']);
  expect(response.body.equals(original.body)).toBe(true);
}

function expectInProgress(response: TestResponse): void {
  expect(response.status).toBe(409);
  expect(response.headers[REPLAYED]).toBe('false');
  expect(response.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
  expect(response.json()).toEqual({ message: IDEMPOTENCY_MESSAGES.inProgress });
}

function expectMismatch(response: TestResponse): void {
  expect(response.status).toBe(422);
  expect(response.headers[REPLAYED]).toBeUndefined();
  expect(response.headers['retry-after']).toBeUndefined();
  expect(response.json()).toEqual({ message: IDEMPOTENCY_MESSAGES.mismatch });
}

describe('idempotency through real HTTP', () => {
  /** A lease long enough never to end during a test. */
  let app: EdgeTestApp | undefined;
  /** A compressed lease, for expiry. */
  let shortLeaseApp: EdgeTestApp | undefined;

  beforeAll(async () => {
    await migrateGatewaySchema();
    app = await startEdgeTestApp(
      gatewayTestConfig({
        ...GENEROUS_LIMITS,
        IDEMPOTENCY_LEASE_MS: '60000',
        IDEMPOTENCY_SECRET_TTL_MS: String(SECRET_TTL_MS),
      }),
    );
    shortLeaseApp = await startEdgeTestApp(
      gatewayTestConfig({ ...GENEROUS_LIMITS, IDEMPOTENCY_LEASE_MS: String(SHORT_LEASE_MS) }),
    );
  });

  afterAll(async () => {
    await app?.close();
    await shortLeaseApp?.close();
  });

  const edge = (): EdgeTestApp => {
    if (!app) throw new Error('the edge test app did not start');
    return app;
  };
  const shortLease = (): EdgeTestApp => {
    if (!shortLeaseApp) throw new Error('the short-lease test app did not start');
    return shortLeaseApp;
  };

  async function recordsOf(target: EdgeTestApp, accountId: string) {
    const result = await target.database.query<{
      idempotency_key: string;
      state: string;
      status_code: number | null;
      response_body: Buffer | null;
      encrypted: boolean;
      ttl_seconds: number;
    }>(
      `SELECT idempotency_key, state, status_code, response_body, encrypted,
              extract(epoch FROM expires_at - clock_timestamp())::float8 AS ttl_seconds
       FROM "gateway"."idempotency_records" WHERE account_id = $1`,
      [accountId],
    );
    return result.rows;
  }

  describe('fresh execution and replay', () => {
    it('executes once, then replays status and bytes with Idempotent-Replayed: true', async () => {
      const accountId = newAccountId();
      const body = '{"name":"first","n":1}';
      const fresh = await edge().send('POST', THINGS(accountId), { accountId, key: 'k1', body });
      expectFresh(fresh, 201);
      expect(fresh.json()).toMatchObject({ echo: { name: 'first', n: 1 } });
      for (let i = 0; i < 3; i += 1) {
        const replay = await edge().send('POST', THINGS(accountId), { accountId, key: 'k1', body });
        expectReplayOf(replay, fresh);
      }
      expect(edge().executions(accountId, 'things')).toBe(1);
      expect(await recordsOf(edge(), accountId)).toMatchObject([
        { idempotency_key: 'k1', state: 'completed', status_code: 201, encrypted: false },
      ]);
    });

    it('stores ordinary outcomes for the replay lifetime (24 hours)', async () => {
      const accountId = newAccountId();
      await edge().send('POST', THINGS(accountId), { accountId, key: 'k', body: '{}' });
      const [record] = await recordsOf(edge(), accountId);
      expect(record?.ttl_seconds).toBeGreaterThan(86_400 - 60);
      expect(record?.ttl_seconds).toBeLessThanOrEqual(86_400);
    });

    it('replays a request without a body', async () => {
      const accountId = newAccountId();
      const fresh = await edge().send('POST', THINGS(accountId), { accountId, key: 'empty' });
      expectFresh(fresh, 201);
      const replay = await edge().send('POST', THINGS(accountId), { accountId, key: 'empty' });
      expectReplayOf(replay, fresh);
    });

    it('matches on the path without its query string', async () => {
      const accountId = newAccountId();
      const body = '{"a":1}';
      const fresh = await edge().send('POST', `${THINGS(accountId)}?x=1`, {
        accountId,
        key: 'q',
        body,
      });
      const replay = await edge().send('POST', `${THINGS(accountId)}?y=2`, {
        accountId,
        key: 'q',
        body,
      });
      expectReplayOf(replay, fresh);
      expect(edge().executions(accountId, 'things')).toBe(1);
    });

    it('stores and replays a 4xx of an ordinary route', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/invalid`;
      const fresh = await edge().send('POST', path, { accountId, key: 'bad', body: '{}' });
      expectFresh(fresh, 400);
      const replay = await edge().send('POST', path, { accountId, key: 'bad', body: '{}' });
      expectReplayOf(replay, fresh);
      expect(edge().executions(accountId, 'invalid')).toBe(1);
    });

    it('keeps the same key of two accounts apart', async () => {
      const accountA = newAccountId();
      const accountB = newAccountId();
      const body = '{"same":true}';
      const a = await edge().send('POST', THINGS(accountA), {
        accountId: accountA,
        key: 's',
        body,
      });
      const b = await edge().send('POST', THINGS(accountB), {
        accountId: accountB,
        key: 's',
        body,
      });
      expectFresh(a, 201);
      expectFresh(b, 201);
      expect(a.body.equals(b.body)).toBe(false);
    });
  });

  describe('in progress', () => {
    it('answers 409 with the header pair while the first execution runs, then replays', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/slow`;
      const first = edge().send('POST', path, { accountId, key: 'slow', body: '{}' });
      await pollUntil(
        () => edge().parked(accountId),
        (parked) => parked === 1,
        { what: 'the first execution to start' },
      );
      const second = await edge().send('POST', path, { accountId, key: 'slow', body: '{}' });
      expectInProgress(second);
      expect(second.headers['retry-after']).toBe('1');
      edge().releaseParked(accountId);
      const fresh = await first;
      expectFresh(fresh, 201);
      const replay = await edge().send('POST', path, { accountId, key: 'slow', body: '{}' });
      expectReplayOf(replay, fresh);
      expect(edge().executions(accountId, 'slow')).toBe(1);
    });

    it('executes once for many parallel requests with one key', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/slow`;
      const send = () => edge().send('POST', path, { accountId, key: 'burst', body: '{"b":1}' });
      const responses = Array.from({ length: 20 }, send);
      await pollUntil(
        () => edge().parked(accountId),
        (parked) => parked === 1,
        { what: 'one execution to start' },
      );
      const settled: TestResponse[] = [];
      for (const response of responses) void response.then((result) => settled.push(result));
      await pollUntil(
        () => settled.length,
        (length) => length === 19,
        { what: 'every other request to be answered' },
      );
      for (const response of settled) expectInProgress(response);
      edge().releaseParked(accountId);
      const all = await Promise.all(responses);
      const fresh = all.filter((response) => response.status === 201);
      expect(fresh).toHaveLength(1);
      expect(edge().executions(accountId, 'slow')).toBe(1);
    });

    it('executes exactly once when parallel requests race to a fast handler', async () => {
      const accountId = newAccountId();
      const body = '{"race":true}';
      const all = await Promise.all(
        Array.from({ length: 25 }, () =>
          edge().send('POST', THINGS(accountId), { accountId, key: 'race', body }),
        ),
      );
      expect(edge().executions(accountId, 'things')).toBe(1);
      const fresh = all.filter((response) => response.headers[REPLAYED] === undefined);
      expect(fresh).toHaveLength(1);
      const [original] = fresh;
      if (!original) throw new Error('no fresh response');
      for (const response of all) {
        if (response.headers[REPLAYED] === 'true') {
          expectReplayOf(response, original);
        } else if (response.status === 409) {
          expectInProgress(response);
        } else {
          expectFresh(response, 201);
        }
      }
    });
  });

  describe('payload mismatch', () => {
    it('answers 422 for another body, method or path, with neither header', async () => {
      const accountId = newAccountId();
      const body = '{"name":"original"}';
      const fresh = await edge().send('POST', THINGS(accountId), { accountId, key: 'm', body });
      expectFresh(fresh, 201);
      expectMismatch(
        await edge().send('POST', THINGS(accountId), {
          accountId,
          key: 'm',
          body: '{"name":"changed"}',
        }),
      );
      // The same JSON with other bytes is another body.
      expectMismatch(
        await edge().send('POST', THINGS(accountId), {
          accountId,
          key: 'm',
          body: '{"name": "original"}',
        }),
      );
      expectMismatch(await edge().send('PUT', THINGS(accountId), { accountId, key: 'm', body }));
      expectMismatch(
        await edge().send('POST', `/v2/accounts/${accountId}/other-things`, {
          accountId,
          key: 'm',
          body,
        }),
      );
      expect(edge().executions(accountId, 'things')).toBe(1);
      expect(edge().executions(accountId, 'things-put')).toBe(0);
      expect(edge().executions(accountId, 'other-things')).toBe(0);
      expectReplayOf(
        await edge().send('POST', THINGS(accountId), { accountId, key: 'm', body }),
        fresh,
      );
    });

    it('fingerprints every byte of a body that arrives in many chunks', async () => {
      const accountId = newAccountId();
      const filler = 'a'.repeat(2 * 1024 * 1024);
      const body = JSON.stringify({ filler, last: 1 });
      const changedAtTheEnd = JSON.stringify({ filler, last: 2 });
      const fresh = await edge().send('POST', THINGS(accountId), { accountId, key: 'big', body });
      expectFresh(fresh, 201);
      expectReplayOf(
        await edge().send('POST', THINGS(accountId), { accountId, key: 'big', body }),
        fresh,
      );
      expectMismatch(
        await edge().send('POST', THINGS(accountId), {
          accountId,
          key: 'big',
          body: changedAtTheEnd,
        }),
      );
      expect(edge().executions(accountId, 'things')).toBe(1);
    });

    it('answers 422 for another path parameter', async () => {
      const accountId = newAccountId();
      const body = '{}';
      await edge().send('POST', THINGS(accountId), { accountId, key: 'p', body });
      const otherPath = THINGS(newAccountId());
      expectMismatch(await edge().send('POST', otherPath, { accountId, key: 'p', body }));
    });

    it('answers 422 while the first execution is still running', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/slow`;
      const first = edge().send('POST', path, { accountId, key: 'mm', body: '{"v":1}' });
      await pollUntil(
        () => edge().parked(accountId),
        (parked) => parked === 1,
        { what: 'the first execution to start' },
      );
      expectMismatch(await edge().send('POST', path, { accountId, key: 'mm', body: '{"v":2}' }));
      edge().releaseParked(accountId);
      expectFresh(await first, 201);
    });
  });

  describe('failures', () => {
    it('stores nothing for a handler failure (500) and lets a retry execute', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/failing`;
      const first = await edge().send('POST', path, { accountId, key: 'f', body: '{}' });
      expect(first.status).toBe(500);
      expect(first.headers[REPLAYED]).toBeUndefined();
      expect(await recordsOf(edge(), accountId)).toEqual([]);
      const retry = await edge().send('POST', path, { accountId, key: 'f', body: '{}' });
      expect(retry.status).toBe(500);
      expect(retry.headers[REPLAYED]).toBeUndefined();
      expect(edge().executions(accountId, 'failing')).toBe(2);
      expect(await recordsOf(edge(), accountId)).toEqual([]);
    });
  });

  describe('lease expiry', () => {
    it('re-executes once the lease of an unfinished execution ends', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/slow`;
      const first = shortLease().send('POST', path, { accountId, key: 'lease', body: '{}' });
      await pollUntil(
        () => shortLease().parked(accountId),
        (parked) => parked === 1,
        { what: 'the first execution to start' },
      );
      const second = await pollUntil(
        () => shortLease().send('POST', path, { accountId, key: 'lease', body: '{}' }),
        (response) => response.status !== 409,
        { what: 'the lease to end', intervalMs: 100 },
      );
      expectFresh(second, 201);
      expect(shortLease().executions(accountId, 'slow')).toBe(2);
      shortLease().releaseParked(accountId);
      const late = await first;
      expectFresh(late, 201);
      // The late finisher lost its claim: the stored outcome is the second execution's.
      const replay = await shortLease().send('POST', path, { accountId, key: 'lease', body: '{}' });
      expectReplayOf(replay, second);
      expect(replay.body.equals(late.body)).toBe(false);
    });
  });

  describe('secret-bearing creations', () => {
    it('replays a 201 with the same secret, stored encrypted for the secret lifetime', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/api-keys`;
      const body = '{"label":"ci"}';
      const fresh = await edge().send('POST', path, { accountId, key: 'sk', body });
      expectFresh(fresh, 201);
      const secret = (fresh.json() as { secret_key: string }).secret_key;
      expect(secret).toMatch(/^envoi-sk-/);
      const replay = await edge().send('POST', path, { accountId, key: 'sk', body });
      expectReplayOf(replay, fresh);
      expect((replay.json() as { secret_key: string }).secret_key).toBe(secret);
      expect(edge().executions(accountId, 'api-keys')).toBe(1);

      const [record] = await recordsOf(edge(), accountId);
      expect(record).toMatchObject({ state: 'completed', status_code: 201, encrypted: true });
      const stored = record?.response_body ?? Buffer.alloc(0);
      expect(stored.length).toBeGreaterThan(0);
      expect(stored.includes(Buffer.from(secret))).toBe(false);
      expect(stored.includes(fresh.body)).toBe(false);
      expect(record?.ttl_seconds).toBeGreaterThan(SECRET_TTL_MS / 1000 - 60);
      expect(record?.ttl_seconds).toBeLessThanOrEqual(SECRET_TTL_MS / 1000);
    });

    it('holds the key after a 4xx until the lease ends, then executes again', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/api-keys`;
      const body = '{"fail":true}';
      const fresh = await shortLease().send('POST', path, { accountId, key: 'h', body });
      expectFresh(fresh, 400);
      expect(await recordsOf(shortLease(), accountId)).toMatchObject([
        { state: 'held', status_code: null, response_body: null },
      ]);
      const held = await shortLease().send('POST', path, { accountId, key: 'h', body });
      expectInProgress(held);
      expect(Number(held.headers['retry-after'])).toBeLessThanOrEqual(SHORT_LEASE_MS / 1000);
      expect(shortLease().executions(accountId, 'api-keys')).toBe(1);
      const again = await pollUntil(
        () => shortLease().send('POST', path, { accountId, key: 'h', body }),
        (response) => response.status !== 409,
        { what: 'the lease to end', intervalMs: 100 },
      );
      expectFresh(again, 400);
      expect(shortLease().executions(accountId, 'api-keys')).toBe(2);
    });
  });

  describe('when the header does not apply', () => {
    it('keeps no record for a request without Idempotency-Key', async () => {
      const accountId = newAccountId();
      const first = await edge().send('POST', THINGS(accountId), { accountId, body: '{}' });
      const second = await edge().send('POST', THINGS(accountId), { accountId, body: '{}' });
      expectFresh(first, 201);
      expectFresh(second, 201);
      expect(edge().executions(accountId, 'things')).toBe(2);
      expect(await recordsOf(edge(), accountId)).toEqual([]);
    });

    it('ignores the key on a route without idempotency, even at 300 characters', async () => {
      const accountId = newAccountId();
      const path = `/v2/accounts/${accountId}/plain`;
      const key = 'x'.repeat(300);
      expectFresh(await edge().send('POST', path, { accountId, key, body: '{}' }), 201);
      expectFresh(await edge().send('POST', path, { accountId, key, body: '{}' }), 201);
      expect(edge().executions(accountId, 'plain')).toBe(2);
      expect(await recordsOf(edge(), accountId)).toEqual([]);
    });

    it('answers 400 to a 256-character key and does not execute', async () => {
      const accountId = newAccountId();
      const response = await edge().send('POST', THINGS(accountId), {
        accountId,
        key: 'x'.repeat(256),
        body: '{}',
      });
      expect(response.status).toBe(400);
      expect(response.json()).toEqual({ message: IDEMPOTENCY_MESSAGES.invalidKey });
      expect(edge().executions(accountId, 'things')).toBe(0);
      expect(await recordsOf(edge(), accountId)).toEqual([]);
    });

    it('accepts a 255-character key', async () => {
      const accountId = newAccountId();
      const key = 'x'.repeat(255);
      const fresh = await edge().send('POST', THINGS(accountId), { accountId, key, body: '{}' });
      expectFresh(fresh, 201);
      expectReplayOf(
        await edge().send('POST', THINGS(accountId), { accountId, key, body: '{}' }),
        fresh,
      );
    });

    it('answers 400 to a JSON body with a __proto__ key before any claim', async () => {
      const accountId = newAccountId();
      const response = await edge().send('POST', THINGS(accountId), {
        accountId,
        key: 'proto',
        body: '{"__proto__":{"polluted":true}}',
      });
      expect(response.status).toBe(400);
      expect(response.json()).toEqual({ message: expect.any(String) as unknown });
      expect(edge().executions(accountId, 'things')).toBe(0);
      expect(await recordsOf(edge(), accountId)).toEqual([]);
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
    });

    it('answers 400 to a JSON body with a constructor.prototype key', async () => {
      const accountId = newAccountId();
      const response = await edge().send('POST', THINGS(accountId), {
        accountId,
        body: '{"constructor":{"prototype":{"polluted":true}}}',
      });
      expect(response.status).toBe(400);
      expect(edge().executions(accountId, 'things')).toBe(0);
    });

    it('answers 415 to a body that is not JSON', async () => {
      const accountId = newAccountId();
      const response = await edge().send('POST', THINGS(accountId), {
        accountId,
        key: 'text',
        body: 'hello',
        headers: { 'content-type': 'text/plain' },
      });
      expect(response.status).toBe(415);
      expect(edge().executions(accountId, 'things')).toBe(0);
      expect(await recordsOf(edge(), accountId)).toEqual([]);
    });

    it('ignores the key of an unauthenticated request', async () => {
      const accountId = newAccountId();
      const path = THINGS(accountId);
      expectFresh(await edge().send('POST', path, { key: 'anon', body: '{}' }), 201);
      expectFresh(await edge().send('POST', path, { key: 'anon', body: '{}' }), 201);
      expect(edge().executions(accountId, 'things')).toBe(2);
    });
  });
});
