import {
  type AccountRecord,
  ALL_ACCESS_SCOPES,
  type ApiKeyRecord,
  type CreatedApiKeyRecord,
} from '@envoi/contracts-accounts';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { ApiResponse, KeyClient } from '../support/api-client';
import { expectError } from '../support/expect-error';

interface KeyList {
  data: ApiKeyRecord[];
}

function keyPath(session: AccountSession, id: string): string {
  return session.path(`/api-keys/${id}`);
}

function createWith(
  client: KeyClient,
  session: AccountSession,
  body: Record<string, unknown>,
): Promise<ApiResponse<CreatedApiKeyRecord>> {
  return client.post<CreatedApiKeyRecord>(session.path('/api-keys'), body);
}

/** The ids of the account's keys, as its full-access key lists them. */
async function listedKeyIds(session: AccountSession): Promise<string[]> {
  const response = await session.api.get<KeyList>(session.path('/api-keys'));
  expect(response.status).toBe(200);
  return response.body.data.map((key) => key.id).sort();
}

/** The key as stored, but for last_used_at, which any use of the key moves. */
async function storedKey(session: AccountSession, id: string): Promise<ApiKeyRecord> {
  const response = await session.api.get<ApiKeyRecord>(keyPath(session, id));
  expect(response.status).toBe(200);
  return { ...response.body, last_used_at: null };
}

function scopeNames(key: ApiKeyRecord): string[] {
  return key.scopes.map((scope) => scope.scope).sort();
}

describe('a key grants only scopes it holds (403, the status of a missing scope: platform notes §2.11)', () => {
  afterAll(() => closeSessions());

  it('refuses a key holding only api-keys:write creating an all-scopes key, and creates nothing', async () => {
    const session = await createAccountSession();
    const writer = await createKey(session, ['api-keys:write']);
    const before = await listedKeyIds(session);

    const response = await createWith(writer.client, session, {
      label: 'escalated',
      scopes: [...ALL_ACCESS_SCOPES],
    });

    expectError(response, 403);
    const { message } = response.body as unknown as { message: string };
    // Every scope but api-keys:write: the first 20 named, the other 17 counted.
    expect(message).toMatch(/^this API key cannot grant scopes it does not hold: domains:read, /);
    expect(message).toMatch(/ and 17 more$/);
    expect(message).not.toContain('api-keys:write');
    expect(await listedKeyIds(session)).toEqual(before);
  });

  it('names exactly the lacking scope when the rest are held', async () => {
    const session = await createAccountSession();
    const writer = await createKey(session, ['api-keys:write', 'accounts:read']);
    const response = await createWith(writer.client, session, {
      label: 'one too many',
      scopes: ['accounts:read', 'suppressions:wipe'],
    });
    expectError(
      response,
      403,
      'this API key cannot grant scopes it does not hold: suppressions:wipe',
    );
  });

  it('lets a key create keys with its own scopes, and domain scopes under its :all scopes', async () => {
    const session = await createAccountSession();
    const owned = await session.api.post(session.path('/domains'), { domain: 'example.com' });
    expect(owned.status).toBe(201);
    const writer = await createKey(session, ['api-keys:write', 'messages:send:all']);

    const same = await createWith(writer.client, session, {
      label: 'same',
      scopes: ['api-keys:write', 'messages:send:all'],
    });
    expect(same.status).toBe(201);
    const narrower = await createWith(writer.client, session, {
      label: 'narrower',
      scopes: ['messages:send:{Example.COM}'],
    });
    expect(narrower.status).toBe(201);
    expect(scopeNames(narrower.body)).toEqual(['messages:send:{example.com}']);

    const sendOnly = await createKey(session, ['api-keys:write', 'messages:send:{example.com}']);
    expectError(
      await createWith(sendOnly.client, session, { label: 'wider', scopes: ['messages:send:all'] }),
      403,
      'this API key cannot grant scopes it does not hold: messages:send:all',
    );
  });

  it('refuses an update adding a scope the caller lacks, and leaves the key unchanged', async () => {
    const session = await createAccountSession();
    const writer = await createKey(session, ['api-keys:write', 'accounts:read']);
    const target = await createKey(session, ['accounts:read']);
    const before = await storedKey(session, target.id);

    const response = await writer.client.put(keyPath(session, target.id), {
      label: 'widened',
      scopes: ['accounts:read', 'accounts:write'],
    });

    expectError(response, 403, 'this API key cannot grant scopes it does not hold: accounts:write');
    expect(await storedKey(session, target.id)).toEqual(before);
  });

  it('refuses a key widening its own scopes', async () => {
    const session = await createAccountSession();
    const writer = await createKey(session, ['api-keys:write']);
    const before = await storedKey(session, writer.id);
    expectError(
      await writer.client.put(keyPath(session, writer.id), {
        scopes: [...ALL_ACCESS_SCOPES],
      }),
      403,
    );
    expect(await storedKey(session, writer.id)).toEqual(before);
    expectError(await writer.client.get(session.path()), 403);
  });

  it('allows an update within the caller’s scopes, and one that does not touch scopes', async () => {
    const session = await createAccountSession();
    const writer = await createKey(session, ['api-keys:write', 'accounts:read', 'domains:read']);
    const target = await createKey(session, [...ALL_ACCESS_SCOPES]);

    const relabelled = await writer.client.put<ApiKeyRecord>(keyPath(session, target.id), {
      label: 'relabelled',
      scopes: null,
    });
    expect(relabelled.status).toBe(200);
    expect(relabelled.body.label).toBe('relabelled');
    expect(scopeNames(relabelled.body)).toEqual([...ALL_ACCESS_SCOPES].sort());

    const narrowed = await writer.client.put<ApiKeyRecord>(keyPath(session, target.id), {
      scopes: ['domains:read', 'accounts:read'],
    });
    expect(narrowed.status).toBe(200);
    expect(scopeNames(narrowed.body)).toEqual(['accounts:read', 'domains:read']);
  });
});

describe('an IP allow list whose entries together allow every address (spec 5.7)', () => {
  let session: AccountSession;
  beforeAll(async () => {
    session = await createAccountSession();
  });
  afterAll(() => closeSessions());

  /** The 400 message the single allow-all entry of that family gets. */
  async function allowAllMessage(entry: string): Promise<string> {
    const response = await createWith(session.api, session, {
      label: 'allow all',
      scopes: ['accounts:read'],
      ip_allow_list: [entry],
    });
    expectError(response, 400);
    return (response.body as unknown as { message: string }).message;
  }

  const slash8s = Array.from({ length: 256 }, (_, octet) => `${octet}.0.0.0/8`);

  it.each([
    ['0.0.0.0/1 + 128.0.0.0/1', ['0.0.0.0/1', '128.0.0.0/1'], '0.0.0.0/0'],
    ['::/1 + 8000::/1', ['::/1', '8000::/1'], '::/0'],
    ['every IPv4 /8', slash8s, '0.0.0.0/0'],
    ['IPv4-mapped halves', ['::ffff:0.0.0.0/97', '::ffff:128.0.0.0/97'], '0.0.0.0/0'],
    [
      'overlapping halves and a single address',
      ['10.0.0.1', '0.0.0.0/1', '128.0.0.0/1', '0.0.0.0/2'],
      '0.0.0.0/0',
    ],
  ])(
    'rejects %s on creation with the 400 of the allow-all entry, creating nothing',
    async (_, list, allowAll) => {
      const before = await listedKeyIds(session);
      const response = await createWith(session.api, session, {
        label: 'covering',
        scopes: ['accounts:read'],
        ip_allow_list: list,
      });
      expectError(response, 400, await allowAllMessage(allowAll));
      expect(await listedKeyIds(session)).toEqual(before);
    },
  );

  it('rejects 0.0.0.0/1 + 128.0.0.0/1 on update with 400 and leaves the list unchanged', async () => {
    const key = await createKey(session, ['accounts:read'], ['127.0.0.1']);
    const before = await storedKey(session, key.id);
    const response = await session.api.put(keyPath(session, key.id), {
      ip_allow_list: ['0.0.0.0/1', '128.0.0.0/1'],
    });
    expectError(response, 400, await allowAllMessage('0.0.0.0/0'));
    expect(await storedKey(session, key.id)).toEqual(before);
    expect((await key.client.from('127.0.0.2').get('/v2/ping')).status).toBe(403);
  });

  it('accepts lists that leave addresses out, in each family', async () => {
    const response = await createWith(session.api, session, {
      label: 'nearly everything',
      scopes: ['accounts:read'],
      ip_allow_list: ['0.0.0.0/1', '128.0.0.0/2', '::/1', '8000::/2'],
    });
    expect(response.status).toBe(201);
    expect(response.body.ip_allow_list).toEqual(['0.0.0.0/1', '128.0.0.0/2', '::/1', '8000::/2']);
  });
});

describe('account website (contract: a required uri string; Envoi answers null when unset, deviation account-website-unset-*)', () => {
  afterAll(() => closeSessions());

  it('is null on a fresh account, never ""', async () => {
    const session = await createAccountSession();
    expect(session.created.account.website).toBeNull();
    const response = await session.api.get<AccountRecord>(session.path());
    expect(response.status).toBe(200);
    expect(response.body).toHaveProperty('website', null);
  });

  it('is set by PUT, and kept by a PUT that sends it null or "" (Go clients send every field)', async () => {
    const session = await createAccountSession();
    const set = await session.api.put<AccountRecord>(session.path(), {
      website: 'https://example.com/about',
    });
    expect(set.status).toBe(200);
    expect(set.body.website).toBe('https://example.com/about');
    for (const unset of [null, '']) {
      const response = await session.api.put<AccountRecord>(session.path(), {
        about: `about ${String(unset)}`,
        website: unset,
      });
      expect(response.status).toBe(200);
      expect(response.body.website).toBe('https://example.com/about');
    }
  });

  it('keeps the website when an update leaves it out', async () => {
    const session = await createAccountSession();
    await session.api.put(session.path(), { website: 'https://example.com' });
    const response = await session.api.put<AccountRecord>(session.path(), {
      about: 'We send mail.',
    });
    expect(response.status).toBe(200);
    expect(response.body.website).toBe('https://example.com');
  });
});
