import { randomUUID } from 'node:crypto';

import type { ApiKeyRecord } from '@envoi/contracts-accounts';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import { expectError } from '../support/expect-error';

/** The gateway's documented default body limit (BODY_LIMIT_BYTES). */
const BODY_LIMIT_BYTES = 40 * 1024 * 1024;

/** Bad requests get a clear 4xx with the contract's error body and change nothing. */
describe('request hardening', () => {
  let session: AccountSession;

  beforeAll(async () => {
    session = await createAccountSession();
  });

  afterAll(async () => {
    await closeSessions();
  });

  async function keyLabels(): Promise<string[]> {
    const listed = await session.api.get<{ data: ApiKeyRecord[] }>(session.path('/api-keys'));
    return listed.body.data.map((key) => key.label);
  }

  it('answers 413 for a body over the limit', async () => {
    const label = `big-${randomUUID()}`;
    const rawBody = JSON.stringify({ label, scopes: ['x'.repeat(BODY_LIMIT_BYTES)] });
    const response = await session.api.send('POST', session.path('/api-keys'), { rawBody });
    expectError(response, 413);
    expect(await keyLabels()).not.toContain(label);
  });

  it('answers 415 for a body that is not application/json', async () => {
    const label = `text-${randomUUID()}`;
    const response = await session.api.send('POST', session.path('/api-keys'), {
      rawBody: JSON.stringify({ label, scopes: ['accounts:read'] }),
      headers: { 'content-type': 'text/plain' },
    });
    expectError(response, 415);
    expect(await keyLabels()).not.toContain(label);
  });

  it('answers 415 for a body without a Content-Type', async () => {
    const response = await session.api.send('POST', session.path('/api-keys'), {
      rawBody: JSON.stringify({ label: 'no-type', scopes: ['accounts:read'] }),
      headers: { 'content-type': '' },
    });
    expect([400, 415]).toContain(response.status);
    expect(Object.keys(response.body as object)).toEqual(['message']);
  });

  it('answers 400 for malformed JSON', async () => {
    const response = await session.api.send('POST', session.path('/api-keys'), {
      rawBody: '{"label": "broken", "scopes": [',
    });
    expectError(response, 400);
  });

  it('answers 400 for an empty JSON body', async () => {
    const response = await session.api.send('POST', session.path('/api-keys'), { rawBody: '' });
    expectError(response, 400);
  });

  it('answers 400 for a body that is JSON but not an object', async () => {
    for (const rawBody of ['[]', '"text"', '42', 'null']) {
      const response = await session.api.send('POST', session.path('/api-keys'), { rawBody });
      expectError(response, 400);
    }
  });

  it('rejects __proto__ and constructor keys with 400', async () => {
    for (const rawBody of [
      '{"label":"p","scopes":["accounts:read"],"__proto__":{"admin":true}}',
      '{"label":"c","scopes":["accounts:read"],"constructor":{"prototype":{"admin":true}}}',
    ]) {
      const response = await session.api.send('POST', session.path('/api-keys'), { rawBody });
      expectError(response, 400);
    }
  });

  it('ignores unknown fields consistently: never stored, never echoed', async () => {
    const label = `extra-${randomUUID()}`;
    const created = await session.api.post<ApiKeyRecord & Record<string, unknown>>(
      session.path('/api-keys'),
      { label, scopes: ['accounts:read'], account_id: randomUUID(), admin: true },
    );
    expect(created.status).toBe(201);
    expect(created.body.account_id).toBe(session.accountId);
    expect(created.body['admin']).toBeUndefined();

    const updated = await session.api.put<Record<string, unknown>>(session.path(), {
      about: 'with extras',
      id: randomUUID(),
      owner_id: randomUUID(),
    });
    expect(updated.status).toBe(200);
    expect(updated.body['id']).toBe(session.accountId);
    expect(updated.body['owner_id']).toBe(session.created.account.owner_id);
  });

  it('validates every uuid path parameter before any service call', async () => {
    for (const path of ['/api-keys/not-a-uuid', '/api-keys/123']) {
      expectError(await session.api.get(session.path(path)), 400);
    }
    expectError(await session.api.delete(session.path('/api-keys/not-a-uuid')), 400);
    expectError(await session.api.delete(session.path('/members/zz')), 400, 'invalid user_id');
    expectError(
      await session.api.put(session.path('/api-keys/not-a-uuid'), { label: 'x' }),
      400,
      'invalid key_id',
    );
  });

  it('answers 404 with a {message} body for unknown methods on known paths', async () => {
    const response = await session.api.send('PATCH', session.path('/api-keys'), {
      contract: 'skip',
    });
    expect([404, 405]).toContain(response.status);
    expect(Object.keys(response.body as object)).toEqual(['message']);
  });
});
