import { ALL_ACCESS_SCOPES } from '@envoi/contracts-accounts';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { type ApiResponse, KeyClient } from '../support/api-client';
import { e2eEnvironment } from '../support/environment';
import { expectError } from '../support/expect-error';

const IP_NOT_ALLOWED = "client IP address is not in this API key's allow list";

interface KeyBody {
  id: string;
  ip_allow_list: string[];
}

function createRaw(session: AccountSession, ipAllowList: unknown): Promise<ApiResponse<KeyBody>> {
  return session.api.post<KeyBody>(session.path('/api-keys'), {
    label: 'ip',
    scopes: ['accounts:read'],
    ip_allow_list: ipAllowList,
  });
}

async function storedList(session: AccountSession, ipAllowList: string[]): Promise<string[]> {
  const response = await createRaw(session, ipAllowList);
  expect(response.status).toBe(201);
  const fetched = await session.api.get<KeyBody>(session.path(`/api-keys/${response.body.id}`));
  expect(fetched.body.ip_allow_list).toEqual(response.body.ip_allow_list);
  return response.body.ip_allow_list;
}

async function pingFrom(client: KeyClient, address: string): Promise<number> {
  return (await client.from(address).get('/v2/ping')).status;
}

function viaProxy(client: KeyClient, from: string, forwardedFor: string): Promise<ApiResponse> {
  return client.send('GET', '/v2/ping', {
    localAddress: from,
    headers: { 'x-forwarded-for': forwardedFor },
  });
}

describe('IP allow list', () => {
  let session: AccountSession;
  beforeAll(async () => {
    session = await createAccountSession();
  });
  afterAll(() => closeSessions());

  it('stores a bare IPv4 address as /32 and enforces it on every endpoint', async () => {
    const key = await createKey(session, [...ALL_ACCESS_SCOPES], ['127.0.0.2']);
    const fetched = await session.api.get<KeyBody>(session.path(`/api-keys/${key.id}`));
    expect(fetched.body.ip_allow_list).toEqual(['127.0.0.2/32']);

    const denied = key.client.from('127.0.0.1');
    expectError(await denied.get('/v2/ping'), 403, IP_NOT_ALLOWED);
    expectError(await denied.get(session.path()), 403, IP_NOT_ALLOWED);
    expectError(await denied.get(session.path('/api-keys')), 403, IP_NOT_ALLOWED);

    const allowed = key.client.from('127.0.0.2');
    expect((await allowed.get('/v2/ping')).status).toBe(200);
    expect((await allowed.get(session.path())).status).toBe(200);
  });

  it('answers 403 before reading the body of a write request', async () => {
    const key = await createKey(session, [...ALL_ACCESS_SCOPES], ['127.0.0.2']);
    const response = await key.client.send('POST', session.path('/api-keys'), {
      localAddress: '127.0.0.1',
      rawBody: '{not json',
    });
    expectError(response, 403, IP_NOT_ALLOWED);
  });

  it('covers a CIDR block and nothing outside it', async () => {
    const key = await createKey(session, ['accounts:read'], ['127.0.0.0/30']);
    for (const address of ['127.0.0.1', '127.0.0.2', '127.0.0.3']) {
      expect(await pingFrom(key.client, address)).toBe(200);
    }
    expect(await pingFrom(key.client, '127.0.0.5')).toBe(403);
  });

  it('stores a bare IPv6 address as /128 and matches ::1 only', async () => {
    const key = await createKey(session, ['accounts:read'], ['::1']);
    const fetched = await session.api.get<KeyBody>(session.path(`/api-keys/${key.id}`));
    expect(fetched.body.ip_allow_list).toEqual(['::1/128']);
    expect(await pingFrom(key.client, '::1')).toBe(200);
    expect(await pingFrom(key.client, '127.0.0.1')).toBe(403);
  });

  it('canonicalises a CIDR block to its network address', async () => {
    expect(await storedList(session, ['10.1.2.3/8'])).toEqual(['10.0.0.0/8']);
  });

  it('removes duplicates, including ones equal after canonicalisation', async () => {
    const list = await storedList(session, [
      '127.0.0.2',
      '127.0.0.2/32',
      '10.1.2.3/8',
      '10.9.9.9/8',
    ]);
    expect([...list].sort()).toEqual(['10.0.0.0/8', '127.0.0.2/32']);
  });

  it.each([
    ['0.0.0.0/0', ['0.0.0.0/0']],
    ['::/0', ['::/0']],
    ['a value that is not an address', ['not-an-ip']],
    ['an out-of-range prefix', ['10.0.0.0/33']],
  ])('rejects %s with 400', async (_, list) => {
    expectError(await createRaw(session, list), 400);
  });

  it('accepts 100 distinct entries and rejects 101', async () => {
    const entries = (count: number) => Array.from({ length: count }, (_, i) => `10.0.${i}.1`);
    const hundred = await createRaw(session, entries(100));
    expect(hundred.status).toBe(201);
    expect(hundred.body.ip_allow_list).toHaveLength(100);
    expectError(await createRaw(session, entries(101)), 400);
  });

  it('counts the 100-entry limit after de-duplication', async () => {
    const entries = Array.from({ length: 100 }, (_, i) => `10.0.${i}.1`);
    const response = await createRaw(session, [...entries, ...entries]);
    expect(response.status).toBe(201);
    expect(response.body.ip_allow_list).toHaveLength(100);
  });

  it('treats an empty list as unrestricted', async () => {
    const key = await createKey(session, ['accounts:read'], []);
    const fetched = await session.api.get<KeyBody>(session.path(`/api-keys/${key.id}`));
    expect(fetched.body.ip_allow_list).toEqual([]);
    for (const address of ['127.0.0.1', '127.0.0.7', '::1']) {
      expect(await pingFrom(key.client, address)).toBe(200);
    }
  });

  describe('self-lockout guard', () => {
    it('answers 409 when a key would exclude its own caller, and changes nothing', async () => {
      const own = await createKey(session, ['api-keys:read', 'api-keys:write']);
      const client = own.client.from('127.0.0.1');
      const response = await client.put(session.path(`/api-keys/${own.id}`), {
        ip_allow_list: ['127.0.0.9'],
      });
      expectError(response, 409);
      const fetched = await client.get<KeyBody>(session.path(`/api-keys/${own.id}`));
      expect(fetched.status).toBe(200);
      expect(fetched.body.ip_allow_list).toEqual([]);
    });

    it("accepts a change of the key's own list that keeps the caller", async () => {
      const own = await createKey(session, ['api-keys:read', 'api-keys:write']);
      const client = own.client.from('127.0.0.1');
      const response = await client.put<KeyBody>(session.path(`/api-keys/${own.id}`), {
        ip_allow_list: ['127.0.0.9', '127.0.0.1'],
      });
      expect(response.status).toBe(200);
      expect([...response.body.ip_allow_list].sort()).toEqual(['127.0.0.1/32', '127.0.0.9/32']);
      expect(await pingFrom(own.client, '127.0.0.1')).toBe(200);
    });

    it('accepts a CIDR that covers the caller, and clearing the list', async () => {
      const own = await createKey(session, ['api-keys:read', 'api-keys:write'], ['127.0.0.1']);
      const client = own.client.from('127.0.0.1');
      const path = session.path(`/api-keys/${own.id}`);
      const widened = await client.put<KeyBody>(path, { ip_allow_list: ['127.0.0.0/8'] });
      expect(widened.status).toBe(200);
      expect(widened.body.ip_allow_list).toEqual(['127.0.0.0/8']);
      const cleared = await client.put<KeyBody>(path, { ip_allow_list: [] });
      expect(cleared.status).toBe(200);
      expect(cleared.body.ip_allow_list).toEqual([]);
    });

    it('answers 409 to an IPv6 caller excluding itself', async () => {
      const own = await createKey(session, ['api-keys:read', 'api-keys:write']);
      const client = own.client.from('::1');
      const path = session.path(`/api-keys/${own.id}`);
      expectError(await client.put(path, { ip_allow_list: ['127.0.0.1'] }), 409);
      expect((await client.put(path, { ip_allow_list: ['::1', '127.0.0.1'] })).status).toBe(200);
    });

    it("lets a key restrict ANOTHER key's list away from the caller", async () => {
      const own = await createKey(session, ['api-keys:read', 'api-keys:write']);
      const other = await createKey(session, ['accounts:read']);
      const response = await own.client
        .from('127.0.0.1')
        .put<KeyBody>(session.path(`/api-keys/${other.id}`), { ip_allow_list: ['127.0.0.9'] });
      expect(response.status).toBe(200);
      expect(response.body.ip_allow_list).toEqual(['127.0.0.9/32']);
      expect(await pingFrom(other.client, '127.0.0.1')).toBe(403);
      expect(await pingFrom(other.client, '127.0.0.9')).toBe(200);
    });
  });

  describe('trusted proxy', () => {
    it('uses X-Forwarded-For only from the trusted proxy', async () => {
      const { trustedProxyIp } = e2eEnvironment();
      const key = await createKey(session, ['accounts:read'], ['203.0.113.7']);
      expect((await viaProxy(key.client, trustedProxyIp, '203.0.113.7')).status).toBe(200);
      expectError(await viaProxy(key.client, '127.0.0.1', '203.0.113.7'), 403, IP_NOT_ALLOWED);
    });

    it('judges the client the proxy vouches for, not the proxy itself', async () => {
      const { trustedProxyIp } = e2eEnvironment();
      const key = await createKey(session, ['accounts:read'], ['127.0.0.1']);
      expectError(await viaProxy(key.client, trustedProxyIp, '198.51.100.1'), 403, IP_NOT_ALLOWED);
    });

    it('ignores X-Forwarded-For from an untrusted peer', async () => {
      const key = await createKey(session, ['accounts:read'], ['127.0.0.1']);
      expect((await viaProxy(key.client, '127.0.0.1', '198.51.100.1')).status).toBe(200);
    });

    it('takes the address the trusted proxy appended, not a spoofed leftmost one', async () => {
      const { trustedProxyIp } = e2eEnvironment();
      const key = await createKey(session, ['accounts:read'], ['203.0.113.7']);
      const spoofed = await viaProxy(key.client, trustedProxyIp, '203.0.113.7, 198.51.100.1');
      expectError(spoofed, 403, IP_NOT_ALLOWED);
      const genuine = await viaProxy(key.client, trustedProxyIp, '198.51.100.1, 203.0.113.7');
      expect(genuine.status).toBe(200);
    });

    it('guards self-lockout against the forwarded client, not the proxy', async () => {
      const { trustedProxyIp } = e2eEnvironment();
      const own = await createKey(session, ['api-keys:read', 'api-keys:write']);
      const client = new KeyClient(own.client.apiKey, {
        localAddress: trustedProxyIp,
        headers: { 'x-forwarded-for': '203.0.113.7' },
      });
      const path = session.path(`/api-keys/${own.id}`);
      expectError(await client.put(path, { ip_allow_list: [trustedProxyIp] }), 409);
      const kept = await client.put<KeyBody>(path, { ip_allow_list: ['203.0.113.0/24'] });
      expect(kept.status).toBe(200);
      expect(kept.body.ip_allow_list).toEqual(['203.0.113.0/24']);
    });
  });
});
