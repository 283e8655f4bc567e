import { randomUUID } from 'node:crypto';

import type { ApiKeyRecord, CreatedApiKeyRecord } from '@envoi/contracts-accounts';
import type { PaginatedList } from '@envoi/contracts-core';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { KeyClient } from '../support/api-client';
import { expectError } from '../support/expect-error';

const SECRET = /^envoi-sk-[A-Za-z0-9]{64}$/;
const SUB_ACCOUNT_KEY_REFUSED =
  "a sub account's API key cannot manage API keys: they are managed with a key of its parent account";

describe('sub-account API keys', () => {
  let parent: AccountSession;
  let child: AccountSession;
  let sibling: AccountSession;

  beforeAll(async () => {
    parent = await createAccountSession();
    child = await createAccountSession(undefined, parent.accountId);
    sibling = await createAccountSession(undefined, parent.accountId);
  });
  afterAll(() => closeSessions());

  function keysPath(subAccountId = child.accountId, suffix = ''): string {
    return parent.path(`/sub-accounts/${subAccountId}/api-keys${suffix}`);
  }

  async function createChildKey(scopes = ['messages:send:all']): Promise<CreatedApiKeyRecord> {
    const response = await parent.api.post<CreatedApiKeyRecord>(keysPath(), {
      label: `child-${randomUUID().slice(0, 8)}`,
      scopes,
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  it('creates a key of the child, with its secret once, that authenticates as the child', async () => {
    const created = await createChildKey(['accounts:read']);
    expect(created.account_id).toBe(child.accountId);
    expect(created.secret_key).toMatch(SECRET);

    const childKey = new KeyClient(created.secret_key);
    const account = await childKey.get<{ id: string }>(child.path());
    expect(account.status).toBe(200);
    expect(account.body.id).toBe(child.accountId);
    expectError(await childKey.get(parent.path()), 401);

    const listed = await parent.api.get<PaginatedList<ApiKeyRecord>>(keysPath());
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((key) => key.id)).toContain(created.id);
    expect(listed.text).not.toContain(created.secret_key);
    const read = await parent.api.get<ApiKeyRecord>(keysPath(child.accountId, `/${created.id}`));
    expect(read.status).toBe(200);
    expect(read.text).not.toContain('secret_key');
  });

  it('pages through a child’s keys with cursors of that list', async () => {
    await createChildKey();
    await createChildKey();
    const first = await parent.api.get<PaginatedList<ApiKeyRecord>>(
      keysPath(undefined, '?limit=1'),
    );
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(1);
    expect(first.body.pagination.has_more).toBe(true);
    const cursor = first.body.pagination.next_cursor ?? '';
    const second = await parent.api.get<PaginatedList<ApiKeyRecord>>(
      keysPath(undefined, `?limit=1&after=${encodeURIComponent(cursor)}`),
    );
    expect(second.status).toBe(200);
    expect(second.body.data[0]?.id).not.toBe(first.body.data[0]?.id);
    // A cursor of one child's list is refused on another's.
    expectError(
      await parent.api.get(keysPath(sibling.accountId, `?after=${encodeURIComponent(cursor)}`)),
      400,
    );
  });

  it('replays a creation with the same Idempotency-Key and the same secret', async () => {
    const options = { headers: { 'idempotency-key': randomUUID() } };
    const body = { label: 'replayed', scopes: ['accounts:read'] };
    const first = await parent.api.post<CreatedApiKeyRecord>(keysPath(), body, options);
    const second = await parent.api.post<CreatedApiKeyRecord>(keysPath(), body, options);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body.secret_key).toBe(first.body.secret_key);
    expect(second.body.id).toBe(first.body.id);
  });

  it('updates an allow list that excludes the caller: no self-lockout guard for a parent', async () => {
    const created = await createChildKey();
    const response = await parent.api.put<ApiKeyRecord>(
      keysPath(child.accountId, `/${created.id}`),
      { ip_allow_list: ['198.51.100.0/24'] },
    );
    expect(response.status).toBe(200);
    expect(response.body.ip_allow_list).toEqual(['198.51.100.0/24']);
    expectError(await new KeyClient(created.secret_key).get('/v2/ping'), 403);
  });

  it('deletes a child key, which then stops working', async () => {
    const created = await createChildKey(['accounts:read']);
    const childKey = new KeyClient(created.secret_key);
    expect((await childKey.get(child.path())).status).toBe(200);
    const deleted = await parent.api.delete(keysPath(child.accountId, `/${created.id}`));
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({
      message: `api key ${created.id} (${created.label}) deleted successfully`,
    });
    expectError(await parent.api.get(keysPath(child.accountId, `/${created.id}`)), 404);
    expectError(await childKey.get(child.path()), 401);
  });

  it('refuses parent-only scopes (400) and domains the child does not own (400)', async () => {
    for (const scope of ['sub-accounts:read', 'sub-account-api-keys:write']) {
      expectError(await parent.api.post(keysPath(), { label: 'x', scopes: [scope] }), 400);
    }
    expectError(
      await parent.api.post(keysPath(), { label: 'x', scopes: ['messages:send:{unowned.test}'] }),
      400,
    );
  });

  it('answers 404 for a sub-account that is not a child of the path’s parent', async () => {
    const stranger = await createAccountSession();
    const strangerChild = await createAccountSession(undefined, stranger.accountId);
    expectError(await parent.api.get(keysPath(strangerChild.accountId)), 404);
    expectError(await parent.api.get(keysPath(parent.accountId)), 404);
    expectError(
      await parent.api.post(keysPath(randomUUID()), { label: 'x', scopes: ['accounts:read'] }),
      404,
    );
    const siblingKey = (
      await parent.api.post<CreatedApiKeyRecord>(keysPath(sibling.accountId), {
        label: 'sibling',
        scopes: ['accounts:read'],
      })
    ).body;
    expectError(await parent.api.get(keysPath(child.accountId, `/${siblingKey.id}`)), 404);
  });

  it('needs the sub-account-api-keys scopes on the parent key', async () => {
    const reader = await createKey(parent, ['sub-account-api-keys:read']);
    expect((await reader.client.get(keysPath())).status).toBe(200);
    expectError(
      await reader.client.post(keysPath(), { label: 'x', scopes: ['accounts:read'] }),
      403,
    );
    const created = await createChildKey();
    expectError(await reader.client.delete(keysPath(child.accountId, `/${created.id}`)), 403);
  });

  it("refuses a child's key on every API-key route, its own and the sub-account ones (403)", async () => {
    const own = child.created.api_key.id;
    const refusals = [
      await child.api.get(child.path('/api-keys')),
      await child.api.post(child.path('/api-keys'), { label: 'x', scopes: ['accounts:read'] }),
      await child.api.get(child.path(`/api-keys/${own}`)),
      await child.api.put(child.path(`/api-keys/${own}`), { label: 'renamed' }),
      await child.api.delete(child.path(`/api-keys/${own}`)),
    ];
    for (const refusal of refusals) expectError(refusal, 403, SUB_ACCOUNT_KEY_REFUSED);
    // A child's key holds no sub-account scope, and could not use those routes if it did.
    expectError(await child.api.get(child.path(`/sub-accounts/${child.accountId}/api-keys`)), 403);
    // Its parent's and its sibling's paths are not its account at all.
    expectError(await child.api.get(keysPath(sibling.accountId)), 401);
    expectError(await child.api.get(sibling.path('/api-keys')), 401);
    // Nothing was changed: its own key still has its label.
    const key = await parent.api.get<ApiKeyRecord>(keysPath(child.accountId, `/${own}`));
    expect(key.body.label).toBe(child.created.api_key.label);
  });
});
