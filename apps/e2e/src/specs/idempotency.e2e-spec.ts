import { randomUUID } from 'node:crypto';

import type { MemberRecord } from '@envoi/contracts-accounts';
import type { CreateMessageResult } from '@envoi/contracts-messages';
import { pollUntil } from '@envoi/shared-testing';
import { Client } from 'pg';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { type ApiResponse, KeyClient } from '../support/api-client';
import { createVerifiedDomain } from '../support/domains';
import { e2eEnvironment } from '../support/environment';
import { expectError } from '../support/expect-error';
import { type GatewayReplica, startGatewayReplica } from '../support/gateway-replica';

interface CreatedKey {
  id: string;
  secret_key: string;
}

const REPLAYED = 'idempotent-replayed';

function withKey(key: string) {
  return { headers: { 'idempotency-key': key } };
}

function newKey(): string {
  return `e2e-${randomUUID()}`;
}

function memberBody() {
  return { email: `m-${randomUUID().slice(0, 8)}@example.com`, role: 'Analyst' };
}

function keyBody(label = `k-${randomUUID().slice(0, 8)}`) {
  return { label, scopes: ['accounts:read'] };
}

/** The in-progress answer of spec 7.5: 409 with the header pair and a positive Retry-After. */
function expectInProgress(response: ApiResponse): void {
  expectError(response, 409, 'a request with this idempotency key is in progress');
  expect(response.headers[REPLAYED]).toBe('false');
  expect(response.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
}

function expectMismatch(response: ApiResponse): void {
  expectError(response, 422, 'idempotency key was already used with a different request payload');
  expect(response.headers[REPLAYED]).toBeUndefined();
  expect(response.headers['retry-after']).toBeUndefined();
}

describe('Idempotency-Key (spec 7.5 and 8)', () => {
  let session: AccountSession;
  let database: Client;

  beforeAll(async () => {
    session = await createAccountSession();
    database = new Client({ connectionString: e2eEnvironment().serviceEnv['DATABASE_URL'] });
    await database.connect();
  });

  afterAll(async () => {
    await database?.end();
    await closeSessions();
  });

  async function storedRecord(idempotencyKey: string) {
    const result = await database.query<{ state: string; response_body: Buffer | null }>(
      `SELECT state, response_body FROM gateway.idempotency_records
       WHERE account_id = $1 AND idempotency_key = $2`,
      [session.accountId, idempotencyKey],
    );
    return result.rows[0];
  }

  async function members(): Promise<MemberRecord[]> {
    const listed = await session.api.get<{ data: MemberRecord[] }>(session.path('/members'));
    return listed.body.data;
  }

  describe('ordinary creations (members)', () => {
    it('executes a fresh request without the Idempotent-Replayed header', async () => {
      const response = await session.api.post(
        session.path('/members'),
        memberBody(),
        withKey(newKey()),
      );
      expect(response.status).toBe(201);
      expect(response.headers[REPLAYED]).toBeUndefined();
    });

    it('replays the stored outcome byte for byte, marked replayed, without executing again', async () => {
      const key = newKey();
      const body = memberBody();
      const before = (await members()).length;
      const first = await session.api.post(session.path('/members'), body, withKey(key));
      const second = await session.api.post(session.path('/members'), body, withKey(key));

      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.text).toBe(first.text);
      expect(second.headers[REPLAYED]).toBe('true');
      expect(second.headers['content-type']).toBe(first.headers['content-type']);
      expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
      expect(await members()).toHaveLength(before + 1);
    });

    it('stores and replays a 4xx outcome', async () => {
      const key = newKey();
      const invalid = { email: 'not-an-address', role: 'Analyst' };
      const first = await session.api.post(session.path('/members'), invalid, withKey(key));
      const second = await session.api.post(session.path('/members'), invalid, withKey(key));

      expectError(first, 400);
      expect(second.status).toBe(400);
      expect(second.text).toBe(first.text);
      expect(second.headers[REPLAYED]).toBe('true');
    });

    it('answers 422 when the key is reused with another body, path or method', async () => {
      const key = newKey();
      const body = memberBody();
      expect((await session.api.post(session.path('/members'), body, withKey(key))).status).toBe(
        201,
      );

      expectMismatch(await session.api.post(session.path('/members'), memberBody(), withKey(key)));
      expectMismatch(await session.api.post(session.path('/api-keys'), body, withKey(key)));
      // Same JSON value, different bytes: the body is matched by its SHA-256.
      expectMismatch(
        await session.api.send('POST', session.path('/members'), {
          rawBody: JSON.stringify(body, null, 2),
          ...withKey(key),
        }),
      );
    });

    it('scopes keys to the account: another account may use the same key', async () => {
      const other = await createAccountSession();
      const key = newKey();
      const mine = await session.api.post(session.path('/members'), memberBody(), withKey(key));
      const theirs = await other.api.post(other.path('/members'), memberBody(), withKey(key));

      expect(mine.status).toBe(201);
      expect(theirs.status).toBe(201);
      expect(theirs.headers[REPLAYED]).toBeUndefined();
      expect(theirs.text).not.toBe(mine.text);
    });

    it('executes once when many requests with one key arrive together', async () => {
      const key = newKey();
      const body = memberBody();
      const before = (await members()).length;
      const responses = await Promise.all(
        Array.from({ length: 20 }, () =>
          session.api.post(session.path('/members'), body, withKey(key)),
        ),
      );

      const fresh = responses.filter((r) => r.status === 201 && r.headers[REPLAYED] === undefined);
      const replays = responses.filter((r) => r.status === 201 && r.headers[REPLAYED] === 'true');
      const inProgress = responses.filter((r) => r.status === 409);
      expect(fresh).toHaveLength(1);
      expect(replays.length + inProgress.length).toBe(19);
      inProgress.forEach(expectInProgress);
      replays.forEach((replay) => expect(replay.text).toBe(fresh[0]?.text));
      expect(await members()).toHaveLength(before + 1);
    });

    it('does not store authentication failures: the key stays free', async () => {
      const key = newKey();
      const body = memberBody();
      const stranger = new KeyClient(`envoi-sk-${'x'.repeat(64)}`);
      expectError(await stranger.post(session.path('/members'), body, withKey(key)), 401);

      const response = await session.api.post(session.path('/members'), body, withKey(key));
      expect(response.status).toBe(201);
      expect(response.headers[REPLAYED]).toBeUndefined();
    });

    it('does not store IP allow-list failures', async () => {
      const restricted = await createKey(session, ['accounts:members:add'], ['192.0.2.1']);
      const key = newKey();
      const body = memberBody();
      expectError(await restricted.client.post(session.path('/members'), body, withKey(key)), 403);
      expect(await storedRecord(key)).toBeUndefined();

      const response = await session.api.post(session.path('/members'), body, withKey(key));
      expect(response.status).toBe(201);
      expect(response.headers[REPLAYED]).toBeUndefined();
    });

    it('rejects a key longer than 255 characters with 400, executing nothing', async () => {
      const body = memberBody();
      const before = (await members()).length;
      const tooLong = 'k'.repeat(256);
      expectError(await session.api.post(session.path('/members'), body, withKey(tooLong)), 400);
      expect(await members()).toHaveLength(before);

      const longest = 'k'.repeat(255) + randomUUID();
      expect(
        (await session.api.post(session.path('/members'), body, withKey(longest.slice(-255))))
          .status,
      ).toBe(201);
    });

    it('accepts and ignores the header on operations without idempotency', async () => {
      const tooLong = 'k'.repeat(300);
      const account = await session.api.get(session.path(), withKey(tooLong));
      expect(account.status).toBe(200);
      expect(account.headers[REPLAYED]).toBeUndefined();

      const key = newKey();
      const first = await session.api.put(session.path(), { about: 'first' }, withKey(key));
      const second = await session.api.put(session.path(), { about: 'second' }, withKey(key));
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.headers[REPLAYED]).toBeUndefined();
      expect((second.body as { about: string }).about).toBe('second');
      expect(await storedRecord(key)).toBeUndefined();
    });
  });

  describe('sends: the key is committed with the send by the messages service', () => {
    let sendBody: () => Record<string, unknown>;

    beforeAll(async () => {
      const domain = await createVerifiedDomain(session);
      sendBody = () => ({
        from: { email: `app@${domain.domain}` },
        recipients: [{ email: `idem-${randomUUID().slice(0, 8)}@example.net` }],
        subject: 'Once',
        text_content: 'Sent once per key',
      });
    });

    /** What the gateway does with the key after a 5xx: nothing is left of it there. */
    async function releaseAtTheEdge(idempotencyKey: string): Promise<void> {
      await database.query(
        `DELETE FROM gateway.idempotency_records WHERE account_id = $1 AND idempotency_key = $2`,
        [session.accountId, idempotencyKey],
      );
    }

    async function messagesTo(recipient: string): Promise<number> {
      const result = await database.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM messages.messages
          WHERE account_id = $1 AND recipient = $2`,
        [session.accountId, recipient],
      );
      return result.rows[0]?.count ?? -1;
    }

    function sendWithKey(body: Record<string, unknown>, idempotencyKey: string) {
      return session.api.post<CreateMessageResult>(
        session.path('/messages'),
        body,
        withKey(idempotencyKey),
      );
    }

    function recipientOf(body: Record<string, unknown>): string {
      return (body['recipients'] as Array<{ email: string }>)[0]?.email ?? '';
    }

    it('answers a retry the edge re-executes with the committed send: same ids, one message', async () => {
      const key = newKey();
      const body = sendBody();
      const first = await sendWithKey(body, key);
      expect(first.status).toBe(202);
      await releaseAtTheEdge(key);

      const retried = await sendWithKey(body, key);

      expect(retried.status).toBe(202);
      expect(retried.headers[REPLAYED]).toBeUndefined();
      expect(retried.text).toBe(first.text);
      expect(await messagesTo(recipientOf(body))).toBe(1);
      expect((await storedRecord(key))?.state).toBe('completed');
    });

    it('answers 422 for the committed key with another body, and keeps the key for the first', async () => {
      const key = newKey();
      const body = sendBody();
      const first = await sendWithKey(body, key);
      await releaseAtTheEdge(key);
      const other = sendBody();

      expectMismatch(await sendWithKey(other, key));
      expect(await storedRecord(key)).toBeUndefined();
      expect(await messagesTo(recipientOf(other))).toBe(0);

      const retried = await sendWithKey(body, key);
      expect(retried.status).toBe(202);
      expect(retried.body).toEqual(first.body);
    });
  });

  describe('secret-bearing creations (API keys)', () => {
    it('replays a created key with the same secret, stored encrypted', async () => {
      const key = newKey();
      const body = keyBody();
      const first = await session.api.post<CreatedKey>(
        session.path('/api-keys'),
        body,
        withKey(key),
      );
      const second = await session.api.post<CreatedKey>(
        session.path('/api-keys'),
        body,
        withKey(key),
      );

      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.headers[REPLAYED]).toBe('true');
      expect(second.text).toBe(first.text);
      expect(second.body.secret_key).toBe(first.body.secret_key);

      const record = await storedRecord(key);
      expect(record?.state).toBe('completed');
      expect(record?.response_body?.includes(first.body.secret_key)).toBe(false);
      expect(record?.response_body?.includes(first.body.id)).toBe(false);

      const listed = await session.api.get<{ data: { label: string }[] }>(
        session.path('/api-keys'),
      );
      expect(listed.body.data.filter((entry) => entry.label === body.label)).toHaveLength(1);
    });

    it('keeps the key in progress after a 4xx instead of storing it', async () => {
      const key = newKey();
      const invalid = { label: '', scopes: ['accounts:read'] };
      expectError(await session.api.post(session.path('/api-keys'), invalid, withKey(key)), 400);

      expectInProgress(await session.api.post(session.path('/api-keys'), invalid, withKey(key)));
      expect((await storedRecord(key))?.response_body).toBeNull();
    });
  });

  describe('with a compressed lease (a second gateway, IDEMPOTENCY_LEASE_MS=4000)', () => {
    /** Long enough that the second request surely comes within it on a loaded machine. */
    const LEASE_MS = 4_000;
    let replica: GatewayReplica;

    beforeAll(async () => {
      replica = await startGatewayReplica('gateway-lease', {
        IDEMPOTENCY_LEASE_MS: String(LEASE_MS),
      });
    });

    afterAll(async () => {
      await replica?.stop();
    });

    it('re-executes once the lease of a held key has expired', async () => {
      const key = newKey();
      const invalid = { label: '', scopes: ['accounts:read'] };
      const options = { ...withKey(key), ...replica.target };
      const heldSince = Date.now();
      expectError(await session.api.post(session.path('/api-keys'), invalid, options), 400);
      expectInProgress(await session.api.post(session.path('/api-keys'), invalid, options));

      const retried = await pollUntil(
        () => session.api.post(session.path('/api-keys'), invalid, options),
        (response) => response.status !== 409,
        { timeoutMs: LEASE_MS * 4, intervalMs: 250, what: 'the lease to expire' },
      );
      expect(Date.now() - heldSince).toBeGreaterThanOrEqual(LEASE_MS);
      expectError(retried, 400);
      expect(retried.headers[REPLAYED]).toBeUndefined();
    });

    it('shares records with the other replica', async () => {
      const key = newKey();
      const body = memberBody();
      const first = await session.api.post(session.path('/members'), body, withKey(key));
      const replayed = await session.api.post(session.path('/members'), body, {
        ...withKey(key),
        ...replica.target,
      });
      expect(replayed.status).toBe(201);
      expect(replayed.headers[REPLAYED]).toBe('true');
      expect(replayed.text).toBe(first.text);
    });
  });
});
