import { randomUUID } from 'node:crypto';

import { AccountsSubjects, type SubAccountRecord } from '@envoi/contracts-accounts';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
  rpc,
} from '../support/account-session';
import { type ApiResponse, KeyClient } from '../support/api-client';
import { expectError } from '../support/expect-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown;
const SUSPENDED = 'Account is suspended';
const PARENT_KEY_REQUIRED = 'sub accounts can only be managed with a key of the parent account';

function subAccountsPath(session: AccountSession, suffix = ''): string {
  return session.path(`/sub-accounts${suffix}`);
}

async function createSubAccount(
  session: AccountSession,
  body: Record<string, unknown> = {},
): Promise<SubAccountRecord> {
  const response = await session.api.post<SubAccountRecord>(subAccountsPath(session), {
    name: `child-${randomUUID().slice(0, 8)}`,
    website: 'child.example.com',
    ...body,
  });
  expect(response.status).toBe(201);
  return response.body;
}

/** A key of the child (the sub-account key routes are not this spec's; the bus issues it). */
async function childKey(childId: string, scopes: string[]): Promise<KeyClient> {
  const key = await (
    await rpc()
  ).request(AccountsSubjects.createApiKey, {
    account_id: childId,
    key: { label: 'child', scopes },
  });
  return new KeyClient(key.secret_key);
}

function childAccountPath(childId: string): string {
  return `/v2/accounts/${childId}`;
}

describe('sub-accounts', () => {
  let parent: AccountSession;
  beforeAll(async () => {
    parent = await createAccountSession();
  });
  afterAll(() => closeSessions());

  it('creates, reads, lists and updates a sub-account', async () => {
    const created = await createSubAccount(parent, {
      name: '  Acme Shop ',
      website: 'Shop.ACME.example.com',
      monthly_credit: 500,
    });
    expect(created).toEqual({
      object: 'sub_account',
      id: expect.stringMatching(UUID) as unknown,
      parent_account_id: parent.accountId,
      created_at: TIMESTAMP,
      name: 'Acme Shop',
      website: 'shop.acme.example.com',
      status: 'active',
      monthly_credit: 500,
      domain_count: 0,
      member_count: 0,
      last_activity_at: null,
    });
    const path = subAccountsPath(parent, `/${created.id}`);

    const read = await parent.api.get<SubAccountRecord>(path);
    expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: created });
    const list = await parent.api.get<{ data: SubAccountRecord[] }>(subAccountsPath(parent));
    expect(list.status).toBe(200);
    expect(list.body.data).toContainEqual(created);

    const updated = await parent.api.put<SubAccountRecord>(path, {
      name: 'Acme',
      website: null,
      monthly_credit: 0,
    });
    expect({ status: updated.status, body: updated.body }).toEqual({
      status: 200,
      body: { ...created, name: 'Acme', monthly_credit: 0 },
    });
    expectError(await parent.api.put(path, { name: 'Acme' }), 400);
    expectError(await parent.api.put(path, {}), 400);
  });

  it('pages the list with cursors and leaves deleted sub-accounts out', async () => {
    const session = await createAccountSession();
    const first = await createSubAccount(session);
    const second = await createSubAccount(session);
    const third = await createSubAccount(session);
    const deleted = await session.api.delete(subAccountsPath(session, `/${second.id}`));
    expect({ status: deleted.status, body: deleted.body }).toEqual({
      status: 200,
      body: { message: 'sub account deleted' },
    });

    type ListBody = { data: SubAccountRecord[]; pagination: { next_cursor?: string } };
    const page1 = await session.api.get<ListBody>(subAccountsPath(session, '?limit=1'));
    expect(page1.body.data.map((child) => child.id)).toEqual([third.id]);
    const cursor = page1.body.pagination.next_cursor ?? '';
    const page2 = await session.api.get<ListBody>(
      subAccountsPath(session, `?limit=5&after=${encodeURIComponent(cursor)}`),
    );
    expect(page2.body.data.map((child) => child.id)).toEqual([first.id]);

    const gone = await session.api.get<SubAccountRecord>(subAccountsPath(session, `/${second.id}`));
    expect(gone.body.status).toBe('deleted');
    expectError(await session.api.delete(subAccountsPath(session, `/${second.id}`)), 404);
  });

  it('replays a creation made with the same Idempotency-Key', async () => {
    const options = { headers: { 'idempotency-key': randomUUID() } };
    const body = { name: 'Once', website: 'once.example.com' };
    const first = await parent.api.post<SubAccountRecord>(subAccountsPath(parent), body, options);
    const again = await parent.api.post<SubAccountRecord>(subAccountsPath(parent), body, options);
    expect(first.status).toBe(201);
    expect({ status: again.status, id: again.body.id }).toEqual({ status: 201, id: first.body.id });
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('refuses invalid input with 400 and unknown sub-accounts with 404', async () => {
    const refusals: Array<Promise<ApiResponse>> = [
      parent.api.post(subAccountsPath(parent), { name: 'x', website: 'https://x.example.com' }),
      parent.api.post(subAccountsPath(parent), { name: ' ', website: 'x.example.com' }),
      parent.api.post(subAccountsPath(parent), {
        name: 'x',
        website: 'x.example.com',
        monthly_credit: -1,
      }),
      parent.api.get(subAccountsPath(parent, '/not-a-uuid')),
      parent.api.get(subAccountsPath(parent, '?limit=0')),
    ];
    for (const response of await Promise.all(refusals)) expectError(response, 400);
    const child = await createSubAccount(parent);
    expectError(
      await parent.api.post(subAccountsPath(parent, `/${child.id}/suspend`), { reason: '' }),
      400,
    );

    const unknown = subAccountsPath(parent, `/${randomUUID()}`);
    expectError(await parent.api.get(unknown), 404, 'sub account not found');
    const otherParent = await createAccountSession();
    expectError(await otherParent.api.get(subAccountsPath(otherParent, `/${child.id}`)), 404);
  });

  it('suspends a sub-account: its key gets 401 at once, and works again after unsuspend', async () => {
    const child = await createSubAccount(parent);
    const key = await childKey(child.id, ['accounts:read']);
    const path = subAccountsPath(parent, `/${child.id}`);
    // Verified (and cached by the gateway) before the suspension.
    expect((await key.get(childAccountPath(child.id))).status).toBe(200);

    const suspended = await parent.api.post<SubAccountRecord>(`${path}/suspend`, {
      reason: 'unpaid invoices',
    });
    expect({ status: suspended.status, body: suspended.body }).toEqual({
      status: 200,
      body: { ...child, status: 'suspended' },
    });
    expectError(await key.get(childAccountPath(child.id)), 401, SUSPENDED);

    const unsuspended = await parent.api.post<SubAccountRecord>(`${path}/unsuspend`);
    expect({ status: unsuspended.status, body: unsuspended.body }).toEqual({
      status: 200,
      body: { ...child, status: 'active' },
    });
    expect((await key.get(childAccountPath(child.id))).status).toBe(200);
  });

  it('deletes a sub-account softly: its key gets 401, its record reads as deleted', async () => {
    const child = await createSubAccount(parent);
    const key = await childKey(child.id, ['accounts:read']);
    expect((await key.get(childAccountPath(child.id))).status).toBe(200);

    const path = subAccountsPath(parent, `/${child.id}`);
    expect((await parent.api.delete(path)).status).toBe(200);

    expectError(await key.get(childAccountPath(child.id)), 401, SUSPENDED);
    const read = await parent.api.get<SubAccountRecord>(path);
    expect(read.body).toEqual({ ...child, status: 'deleted' });
    expectError(await parent.api.post(`${path}/unsuspend`), 404);
  });

  it('refuses a key of a sub-account on the sub-account routes', async () => {
    const child = await createSubAccount(parent);
    const key = await childKey(child.id, [
      'sub-accounts:read',
      'sub-accounts:write',
      'sub-accounts:suspend',
    ]);
    const own = `${childAccountPath(child.id)}/sub-accounts`;
    expectError(await key.get(own), 403, PARENT_KEY_REQUIRED);
    expectError(await key.post(own, { name: 'grandchild', website: 'g.example.com' }), 403);
    expectError(await key.get(`${own}/${child.id}`), 403, PARENT_KEY_REQUIRED);
    expectError(
      await key.post(`${own}/${child.id}/suspend`, { reason: 'self' }),
      403,
      PARENT_KEY_REQUIRED,
    );
    // Nor the parent's routes: the key belongs to the child.
    expectError(await key.get(subAccountsPath(parent)), 401);
  });

  it('refuses a parent key without the sub-account scopes', async () => {
    const child = await createSubAccount(parent);
    const { client } = await createKey(parent, ['sub-accounts:read']);
    const path = subAccountsPath(parent, `/${child.id}`);
    expect((await client.get(path)).status).toBe(200);
    const refusals = [
      await client.post(subAccountsPath(parent), { name: 'n', website: 'n.example.com' }),
      await client.put(path, { name: 'renamed' }),
      await client.delete(path),
      await client.post(`${path}/suspend`, { reason: 'r' }),
      await client.post(`${path}/unsuspend`),
    ];
    for (const response of refusals) {
      expectError(response, 403, 'insufficient permissions for the required scope');
    }
  });
});
