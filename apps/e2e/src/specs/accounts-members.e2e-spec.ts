import { randomUUID } from 'node:crypto';

import type { AccountRecord, MemberRecord } from '@envoi/contracts-accounts';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import type { ApiResponse } from '../support/api-client';
import { expectError } from '../support/expect-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) as unknown;

function email(): string {
  return `member-${randomUUID().slice(0, 8)}@example.com`;
}

function addMember(session: AccountSession, body: unknown): Promise<ApiResponse<MemberRecord>> {
  return session.api.post<MemberRecord>(session.path('/members'), body);
}

describe('account', () => {
  afterAll(() => closeSessions());

  it('answers GET with every Account field', async () => {
    const session = await createAccountSession();
    const response = await session.api.get<AccountRecord>(session.path());
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      object: 'account',
      id: session.accountId,
      parent_account_id: null,
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
      name: session.created.account.name,
      website: null,
      about: expect.any(String) as unknown,
      track_opens: expect.any(Boolean) as unknown,
      track_clicks: expect.any(Boolean) as unknown,
      reject_bad_recipients: expect.any(Boolean) as unknown,
      reject_mistyped_recipients: expect.any(Boolean) as unknown,
      message_metadata_retention: expect.any(Number) as unknown,
      message_data_retention: expect.any(Number) as unknown,
      owner_id: expect.stringMatching(UUID) as unknown,
    });
    expect(response.body).toEqual(session.created.account);
  });

  it('updates only the given fields and returns the updated record', async () => {
    const session = await createAccountSession();
    const before = (await session.api.get<AccountRecord>(session.path())).body;
    const changes = {
      website: 'https://example.com/about',
      track_opens: !before.track_opens,
      message_metadata_retention: 30,
      message_data_retention: 0,
    };
    const response = await session.api.put<AccountRecord>(session.path(), changes);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...before, ...changes, updated_at: TIMESTAMP });
    const after = await session.api.get<AccountRecord>(session.path());
    expect(after.body).toEqual(response.body);
  });

  it.each([
    ['message_metadata_retention 0', { message_metadata_retention: 0 }],
    ['message_metadata_retention 31', { message_metadata_retention: 31 }],
    ['message_metadata_retention 1.5', { message_metadata_retention: 1.5 }],
    ['message_data_retention -1', { message_data_retention: -1 }],
    ['message_data_retention 31', { message_data_retention: 31 }],
    ['a website that is not a URL', { website: 'not a url' }],
    ['a website without http(s)', { website: 'ftp://example.com' }],
    ['a name of 256 characters', { name: 'n'.repeat(256) }],
    ['a non-boolean flag', { track_clicks: 'yes' }],
  ])('rejects %s with 400 and leaves the account unchanged', async (_, changes) => {
    const session = await createAccountSession();
    const before = (await session.api.get<AccountRecord>(session.path())).body;
    expectError(await session.api.put(session.path(), changes), 400);
    expect((await session.api.get<AccountRecord>(session.path())).body).toEqual(before);
  });

  it('accepts the retention bounds 1 and 30, and data retention 0', async () => {
    const session = await createAccountSession();
    for (const changes of [
      { message_metadata_retention: 1, message_data_retention: 0 },
      { message_metadata_retention: 30, message_data_retention: 30 },
    ]) {
      const response = await session.api.put<AccountRecord>(session.path(), changes);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject(changes);
    }
  });

  it('rejects a body that is not JSON with 400', async () => {
    const session = await createAccountSession();
    expectError(await session.api.send('PUT', session.path(), { rawBody: '{"name":' }), 400);
  });
});

describe('account members', () => {
  afterAll(() => closeSessions());

  it('lists the owner as an Administrator', async () => {
    const session = await createAccountSession();
    const response = await session.api.get(session.path('/members'));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      object: 'list',
      data: [
        {
          created_at: TIMESTAMP,
          updated_at: TIMESTAMP,
          user_id: session.created.account.owner_id,
          account_id: session.accountId,
          role: 'Administrator',
        },
      ],
    });
  });

  it('adds a member, lists it, and refuses the same email twice', async () => {
    const session = await createAccountSession();
    const address = email();
    const response = await addMember(session, { email: address, role: 'Developer' });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      created_at: TIMESTAMP,
      updated_at: TIMESTAMP,
      user_id: expect.stringMatching(UUID) as unknown,
      account_id: session.accountId,
      role: 'Developer',
    });
    const listed = await session.api.get<{ data: MemberRecord[] }>(session.path('/members'));
    expect(listed.body.data).toContainEqual(response.body);
    expect(listed.body.data).toHaveLength(2);

    expectError(await addMember(session, { email: address, role: 'Analyst' }), 409);
    expectError(await addMember(session, { email: address.toUpperCase(), role: 'Analyst' }), 409);
  });

  it.each([
    ['an invalid role', { email: 'a@example.com', role: 'Owner' }],
    ['a missing role', { email: 'a@example.com' }],
    ['an invalid email', { email: 'not-an-email', role: 'Developer' }],
    ['a missing email', { role: 'Developer' }],
  ])('rejects %s with 400', async (_, body) => {
    const session = await createAccountSession();
    expectError(await addMember(session, body), 400);
  });

  it('removes a member once, then answers 404', async () => {
    const session = await createAccountSession();
    const added = await addMember(session, { email: email(), role: 'Billing Manager' });
    expect(added.status).toBe(201);
    const path = session.path(`/members/${added.body.user_id}`);
    const removed = await session.api.delete(path);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ message: expect.any(String) as unknown });
    const listed = await session.api.get<{ data: MemberRecord[] }>(session.path('/members'));
    expect(listed.body.data.map((member) => member.user_id)).toEqual([
      session.created.account.owner_id,
    ]);
    expectError(await session.api.delete(path), 404);
  });

  it('refuses to remove the owner with 400', async () => {
    const session = await createAccountSession();
    const path = session.path(`/members/${session.created.account.owner_id}`);
    expectError(await session.api.delete(path), 400);
    const listed = await session.api.get<{ data: MemberRecord[] }>(session.path('/members'));
    expect(listed.body.data).toHaveLength(1);
  });

  it('answers 400 for a user id that is not a uuid and 404 for an unknown one', async () => {
    const session = await createAccountSession();
    expectError(await session.api.delete(session.path('/members/x')), 400);
    expectError(await session.api.delete(session.path(`/members/${randomUUID()}`)), 404);
  });

  it("cannot remove another account's member through my path", async () => {
    const session = await createAccountSession();
    const other = await createAccountSession();
    const added = await addMember(other, { email: email(), role: 'Developer' });
    expectError(await session.api.delete(session.path(`/members/${added.body.user_id}`)), 404);
    const listed = await other.api.get<{ data: MemberRecord[] }>(other.path('/members'));
    expect(listed.body.data).toHaveLength(2);
  });
});
