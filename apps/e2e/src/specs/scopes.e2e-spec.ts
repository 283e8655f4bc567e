import { randomUUID } from 'node:crypto';

import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { ApiResponse, KeyClient } from '../support/api-client';
import { expectError } from '../support/expect-error';

const INSUFFICIENT = 'insufficient permissions for the required scope';
const UNRELATED = 'suppressions:read';

interface Endpoint {
  name: string;
  scope: string;
  status: number;
  /** Makes the call with `client`, preparing any resource it needs with the session's key. */
  call(session: AccountSession, client: KeyClient): Promise<ApiResponse>;
}

async function addMember(session: AccountSession): Promise<string> {
  const response = await session.api.post<{ user_id: string }>(session.path('/members'), {
    email: `m-${randomUUID().slice(0, 8)}@example.com`,
    role: 'Developer',
  });
  expect(response.status).toBe(201);
  return response.body.user_id;
}

async function otherKey(session: AccountSession): Promise<string> {
  return (await createKey(session, ['accounts:read'])).id;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'GET account',
    scope: 'accounts:read',
    status: 200,
    call: (s, c) => c.get(s.path()),
  },
  {
    name: 'PUT account',
    scope: 'accounts:write',
    status: 200,
    call: (s, c) => c.put(s.path(), { about: 'scoped' }),
  },
  {
    name: 'GET members',
    scope: 'accounts:members:read',
    status: 200,
    call: (s, c) => c.get(s.path('/members')),
  },
  {
    name: 'POST members',
    scope: 'accounts:members:add',
    status: 201,
    call: (s, c) =>
      c.post(s.path('/members'), {
        email: `n-${randomUUID().slice(0, 8)}@example.com`,
        role: 'Analyst',
      }),
  },
  {
    name: 'DELETE member',
    scope: 'accounts:members:remove',
    status: 200,
    call: async (s, c) => c.delete(s.path(`/members/${await addMember(s)}`)),
  },
  {
    name: 'GET api-keys',
    scope: 'api-keys:read',
    status: 200,
    call: (s, c) => c.get(s.path('/api-keys')),
  },
  {
    name: 'GET api-key',
    scope: 'api-keys:read',
    status: 200,
    call: async (s, c) => c.get(s.path(`/api-keys/${await otherKey(s)}`)),
  },
  {
    name: 'POST api-keys',
    scope: 'api-keys:write',
    status: 201,
    // A key grants only scopes it holds (api-key-hardening.e2e-spec.ts).
    call: (s, c) => c.post(s.path('/api-keys'), { label: 'by scope', scopes: ['api-keys:write'] }),
  },
  {
    name: 'PUT api-key',
    scope: 'api-keys:write',
    status: 200,
    call: async (s, c) => c.put(s.path(`/api-keys/${await otherKey(s)}`), { label: 'renamed' }),
  },
  {
    name: 'DELETE api-key',
    scope: 'api-keys:delete',
    status: 200,
    call: async (s, c) => c.delete(s.path(`/api-keys/${await otherKey(s)}`)),
  },
];

async function createWithScopes(session: AccountSession, scopes: unknown): Promise<ApiResponse> {
  return session.api.post(session.path('/api-keys'), { label: 'scopes', scopes });
}

function scopeNames(response: ApiResponse): string[] {
  return (response.body as { scopes: { scope: string }[] }).scopes.map((s) => s.scope).sort();
}

describe('scopes', () => {
  afterAll(() => closeSessions());

  describe.each(ENDPOINTS)('$name', (endpoint) => {
    it(`succeeds with ${endpoint.scope}`, async () => {
      const session = await createAccountSession();
      const key = await createKey(session, [endpoint.scope]);
      const response = await endpoint.call(session, key.client);
      expect(response.status).toBe(endpoint.status);
    });

    it('answers 403 with only an unrelated scope', async () => {
      const session = await createAccountSession();
      const key = await createKey(session, [UNRELATED]);
      expectError(await endpoint.call(session, key.client), 403, INSUFFICIENT);
    });
  });

  it('does not let a read scope write, nor a write scope read', async () => {
    const session = await createAccountSession();
    const reader = await createKey(session, ['accounts:read', 'api-keys:read']);
    const writer = await createKey(session, ['accounts:write', 'api-keys:write']);
    expectError(await reader.client.put(session.path(), { about: 'x' }), 403, INSUFFICIENT);
    expectError(await writer.client.get(session.path()), 403, INSUFFICIENT);
    expectError(await writer.client.get(session.path('/api-keys')), 403, INSUFFICIENT);
    expectError(
      await writer.client.delete(session.path(`/api-keys/${reader.id}`)),
      403,
      INSUFFICIENT,
    );
  });

  it('answers ping for any valid key, whatever its scopes', async () => {
    const session = await createAccountSession();
    const key = await createKey(session, [UNRELATED]);
    const response = await key.client.get('/v2/ping');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: 'pong' });
  });

  describe('validation on key creation', () => {
    let session: AccountSession;
    beforeAll(async () => {
      session = await createAccountSession();
      // Domain scopes must name a domain of the account (platform notes 3.9).
      const owned = await session.api.post(session.path('/domains'), { domain: 'example.com' });
      expect(owned.status).toBe(201);
    });

    it.each([
      ['an unknown scope', ['foo:bar']],
      ['an unknown action with :all', ['accounts:read:all']],
      ['a static scope in domain form', ['accounts:read:{example.com}']],
      ['a domain form that is not a hostname', ['messages:send:{localhost}']],
      ['duplicate scopes', ['accounts:read', 'accounts:read']],
      ['an empty list', []],
      ['a list that is not an array', 'accounts:read'],
      ['a non-string entry', [42]],
    ])('rejects %s with 400', async (_, scopes) => {
      expectError(await createWithScopes(session, scopes), 400);
    });

    it('accepts messages:send:all', async () => {
      const response = await createWithScopes(session, ['messages:send:all']);
      expect(response.status).toBe(201);
      expect(scopeNames(response)).toEqual(['messages:send:all']);
    });

    it('accepts and returns the domain form', async () => {
      const response = await createWithScopes(session, ['messages:send:{example.com}']);
      expect(response.status).toBe(201);
      expect(scopeNames(response)).toEqual(['messages:send:{example.com}']);
    });

    it('normalises the domain of a domain scope to lower case', async () => {
      const response = await createWithScopes(session, ['messages:send:{Example.COM}']);
      expect(response.status).toBe(201);
      expect(scopeNames(response)).toEqual(['messages:send:{example.com}']);
      const id = (response.body as { id: string }).id;
      const fetched = await session.api.get(session.path(`/api-keys/${id}`));
      expect(scopeNames(fetched)).toEqual(['messages:send:{example.com}']);
    });

    it('rejects a domain scope for a domain the account does not own', async () => {
      const response = await createWithScopes(session, ['messages:send:{not-owned.example.org}']);
      expectError(response, 400, 'domain not-owned.example.org is not a domain of this account');
    });

    it('removes the scopes of a domain when the domain is deleted', async () => {
      const name = `gone-${randomUUID().slice(0, 8)}.example.com`;
      expect((await session.api.post(session.path('/domains'), { domain: name })).status).toBe(201);
      const created = await createWithScopes(session, [`messages:send:{${name}}`, 'accounts:read']);
      expect(created.status).toBe(201);
      const id = (created.body as { id: string }).id;

      expect((await session.api.delete(session.path(`/domains/${name}`))).status).toBe(200);

      await pollUntil(
        () => session.api.get(session.path(`/api-keys/${id}`)),
        (response) => !scopeNames(response).includes(`messages:send:{${name}}`),
        { timeoutMs: 10_000, what: 'the deleted domain to leave the key scopes' },
      );
      const fetched = await session.api.get(session.path(`/api-keys/${id}`));
      expect(scopeNames(fetched)).toEqual(['accounts:read']);
    });

    it('drops a domain scope held alongside the same action with :all', async () => {
      const response = await createWithScopes(session, [
        'messages:send:{example.com}',
        'messages:send:all',
        'messages:read:{example.com}',
      ]);
      expect(response.status).toBe(201);
      expect(scopeNames(response)).toEqual(['messages:read:{example.com}', 'messages:send:all']);
    });
  });
});
