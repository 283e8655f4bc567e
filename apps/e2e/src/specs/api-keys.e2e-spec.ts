import { randomUUID } from 'node:crypto';

import type { ApiKeyRecord, CreatedApiKeyRecord } from '@envoi/contracts-accounts';
import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { type ApiResponse, KeyClient } from '../support/api-client';
import { expectError } from '../support/expect-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const SECRET = /^envoi-sk-[A-Za-z0-9]{64}$/;
const TIMESTAMP = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown;

function create(session: AccountSession, body: unknown): Promise<ApiResponse<CreatedApiKeyRecord>> {
  return session.api.post<CreatedApiKeyRecord>(session.path('/api-keys'), body);
}

function keyPath(session: AccountSession, id: string): string {
  return session.path(`/api-keys/${id}`);
}

async function createdKey(session: AccountSession, scopes = ['accounts:read']) {
  const response = await create(session, { label: 'mine', scopes });
  expect(response.status).toBe(201);
  return response.body;
}

describe('API keys', () => {
  let session: AccountSession;
  beforeAll(async () => {
    session = await createAccountSession();
  });
  afterAll(() => closeSessions());

  it('answers a creation with every field of the record and the secret once', async () => {
    const response = await create(session, { label: 'full', scopes: ['accounts:read'] });
    expect(response.status).toBe(201);
    const key = response.body;
    expect(key).toEqual({
      object: 'api_key',
      id: expect.stringMatching(UUID) as unknown,
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
      last_used_at: null,
      account_id: session.accountId,
      label: 'full',
      public_key: expect.any(String) as unknown,
      scopes: [
        {
          id: expect.stringMatching(UUID) as unknown,
          created_at: TIMESTAMP,
          updated_at: TIMESTAMP,
          api_key_id: key.id,
          scope: 'accounts:read',
          domain_id: null,
        },
      ],
      ip_allow_list: [],
      secret_key: expect.stringMatching(SECRET) as unknown,
    });
    expect(key.public_key).not.toBe('');
    expect(key.public_key).not.toContain(key.secret_key.slice(9));
  });

  it('never shows the secret again: list, get, update, delete', async () => {
    const key = await createdKey(session);
    const secret = key.secret_key.slice('envoi-sk-'.length);
    const responses = [
      await session.api.get(session.path('/api-keys')),
      await session.api.get(keyPath(session, key.id)),
      await session.api.put(keyPath(session, key.id), { label: 'renamed' }),
      await session.api.delete(keyPath(session, key.id)),
    ];
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(response.text).not.toContain(secret);
      expect(response.text).not.toContain('secret_key');
    }
  });

  it('authenticates with the new secret and records its last use', async () => {
    const key = await createdKey(session);
    const response = await new KeyClient(key.secret_key).get('/v2/ping');
    expect(response.status).toBe(200);
    const used = await pollUntil(
      () => session.api.get<ApiKeyRecord>(keyPath(session, key.id)),
      (fetched) => fetched.body.last_used_at !== null,
      { what: 'last_used_at to be recorded' },
    );
    expect(used.body.last_used_at).toEqual(TIMESTAMP);
  });

  it('updates the label and moves updated_at', async () => {
    const key = await createdKey(session);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const response = await session.api.put<ApiKeyRecord>(keyPath(session, key.id), {
      label: 'relabelled',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: key.id,
      label: 'relabelled',
      created_at: key.created_at,
    });
    expect(response.body.updated_at).not.toBe(key.updated_at);
    const fetched = await session.api.get<ApiKeyRecord>(keyPath(session, key.id));
    expect(fetched.body.label).toBe('relabelled');
  });

  it.each([
    ['an empty body', {}],
    ['only nulls', { label: null, scopes: null, ip_allow_list: null }],
    ['identical values', { label: 'mine', scopes: ['accounts:read'], ip_allow_list: [] }],
    ['an identical label', { label: 'mine' }],
  ])('rejects an update with %s with 400', async (_, body) => {
    const key = await createdKey(session);
    expectError(await session.api.put(keyPath(session, key.id), body), 400);
  });

  it('replaces the scopes on update, with immediate effect', async () => {
    const key = await createdKey(session, ['accounts:read', 'api-keys:read']);
    const client = new KeyClient(key.secret_key);
    expect((await client.get(session.path())).status).toBe(200);
    const response = await session.api.put<ApiKeyRecord>(keyPath(session, key.id), {
      scopes: ['domains:read'],
    });
    expect(response.status).toBe(200);
    expect(response.body.scopes.map((s) => s.scope)).toEqual(['domains:read']);
    expectError(await client.get(session.path()), 403);
  });

  it('answers 404 for an unknown key id on get, update and delete', async () => {
    const path = keyPath(session, randomUUID());
    expectError(await session.api.get(path), 404);
    expectError(await session.api.put(path, { label: 'x' }), 404);
    expectError(await session.api.delete(path), 404);
  });

  it('answers 400 for a key id that is not a uuid', async () => {
    const path = keyPath(session, 'nope');
    expectError(await session.api.get(path), 400);
    expectError(await session.api.put(path, { label: 'x' }), 400);
    expectError(await session.api.delete(path), 400);
  });

  it("answers 404 for another account's key id on my path, never with its data", async () => {
    const other = await createAccountSession();
    const foreign = await createKey(other, ['accounts:read']);
    const path = keyPath(session, foreign.id);
    for (const response of [
      await session.api.get(path),
      await session.api.put(path, { label: 'stolen' }),
      await session.api.delete(path),
    ]) {
      expectError(response, 404);
      expect(response.text).not.toContain(other.accountId);
    }
    expect((await foreign.client.get('/v2/ping')).status).toBe(200);
    const intact = await other.api.get<ApiKeyRecord>(keyPath(other, foreign.id));
    expect(intact.body.label).not.toBe('stolen');
  });

  it('deletes a key, which stops authenticating at once', async () => {
    const key = await createdKey(session);
    const client = new KeyClient(key.secret_key);
    expect((await client.get('/v2/ping')).status).toBe(200);
    const response = await session.api.delete(keyPath(session, key.id));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: expect.any(String) as unknown });
    expectError(await client.get('/v2/ping'), 401, 'invalid API key');
    expectError(await session.api.get(keyPath(session, key.id)), 404);
  });

  it.each([
    ['an empty label', { label: '', scopes: ['accounts:read'] }],
    ['a label of 256 characters', { label: 'x'.repeat(256), scopes: ['accounts:read'] }],
    ['a missing label', { scopes: ['accounts:read'] }],
    ['missing scopes', { label: 'no scopes' }],
    ['a non-array ip_allow_list', { label: 'l', scopes: ['accounts:read'], ip_allow_list: 'x' }],
  ])('rejects a creation with %s with 400', async (_, body) => {
    expectError(await create(session, body), 400);
  });

  it('accepts a label of 255 characters', async () => {
    const response = await create(session, { label: 'x'.repeat(255), scopes: ['accounts:read'] });
    expect(response.status).toBe(201);
    expect(response.body.label).toBe('x'.repeat(255));
  });

  it('rejects a body that is not JSON with 400', async () => {
    const response = await session.api.send('POST', session.path('/api-keys'), {
      rawBody: '{not json',
    });
    expectError(response, 400);
  });

  it('rejects an update label of 256 characters or empty with 400', async () => {
    const key = await createdKey(session);
    expectError(await session.api.put(keyPath(session, key.id), { label: 'x'.repeat(256) }), 400);
    expectError(await session.api.put(keyPath(session, key.id), { label: '' }), 400);
    expectError(await session.api.put(keyPath(session, key.id), { scopes: [] }), 400);
    expectError(await session.api.put(keyPath(session, key.id), { scopes: ['foo:bar'] }), 400);
    const everywhere = { ip_allow_list: ['0.0.0.0/0'] };
    expectError(await session.api.put(keyPath(session, key.id), everywhere), 400);
    const unchanged = await session.api.get<ApiKeyRecord>(keyPath(session, key.id));
    expect(unchanged.body).toMatchObject({ label: 'mine', ip_allow_list: [] });
    expect(unchanged.body.scopes.map((s) => s.scope)).toEqual(['accounts:read']);
  });

  it('lets a key delete itself, after which it no longer authenticates', async () => {
    const key = await createdKey(session, ['api-keys:delete']);
    const client = new KeyClient(key.secret_key);
    const response = await client.delete(keyPath(session, key.id));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: expect.any(String) as unknown });
    expectError(await client.get('/v2/ping'), 401, 'invalid API key');
  });

  it('ignores unknown body fields', async () => {
    const response = await create(session, {
      label: 'extra',
      scopes: ['accounts:read'],
      account_id: randomUUID(),
      id: randomUUID(),
      unknown_field: true,
    });
    expect(response.status).toBe(201);
    expect(response.body.account_id).toBe(session.accountId);
    expect(response.body).not.toHaveProperty('unknown_field');
  });
});
