import type { FastifyRequest } from 'fastify';

import { ApiError, AUTH_MESSAGES } from '../errors/api-error';
import type { ApiKeyCredentials } from './api-key-credentials.service';
import { Authenticator } from './authenticator.service';
import type { KeyUsageRecorder } from './key-usage-recorder.service';
import type { Principal } from './principal';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const OTHER_ACCOUNT_ID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const KEY_ID = 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f';
const SECRET = `envoi-sk-${'a1B2'.repeat(16)}`;

interface FakeRequestInit {
  url?: string;
  routeUrl?: string | undefined;
  config?: Record<string, unknown>;
  headers?: Record<string, string | string[] | undefined>;
  ip?: string;
  params?: Record<string, string> | undefined;
}

/** Node's flat name/value list, a repeated header once per value. */
function rawHeadersOf(headers: Record<string, string | string[] | undefined>): string[] {
  return Object.entries(headers).flatMap(([name, value]) =>
    [value ?? []].flat().flatMap((one) => [name, one]),
  );
}

function fakeRequest(init: FakeRequestInit = {}): FastifyRequest {
  const url = init.url ?? `/v2/accounts/${ACCOUNT_ID}`;
  const headers = init.headers ?? { authorization: `Bearer ${SECRET}` };
  return {
    url,
    id: 'req-1',
    ip: init.ip ?? '203.0.113.7',
    headers,
    raw: { rawHeaders: rawHeadersOf(headers) },
    params: 'params' in init ? init.params : {},
    routeOptions: {
      url: 'routeUrl' in init ? init.routeUrl : '/v2/accounts/:account_id',
      config: init.config ?? {},
    },
  } as unknown as FastifyRequest;
}

function principal(overrides: Partial<Principal> = {}): Principal {
  const scopes = overrides.scopes ?? ['accounts:read'];
  return {
    key_id: KEY_ID,
    account_id: ACCOUNT_ID,
    parent_account_id: null,
    account_status: 'active',
    scopes,
    ip_allow_list: [],
    scopeSet: new Set(scopes),
    ...overrides,
  };
}

function setup(found: Principal | null = principal()) {
  const verify = jest.fn<Promise<Principal | null>, [string, string]>(() => Promise.resolve(found));
  const record = jest.fn<void, [string]>();
  const authenticator = new Authenticator(
    { verify } as unknown as ApiKeyCredentials,
    { record } as unknown as KeyUsageRecorder,
  );
  return { authenticator, verify, record };
}

/** The ApiError a promise rejects with; fails the test when it resolves or throws anything else. */
async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('Authenticator.onRequest', () => {
  describe('routes that skip authentication', () => {
    it('skips an unknown route so the 404 follows', async () => {
      const { authenticator, verify, record } = setup();
      const request = fakeRequest({ routeUrl: undefined, headers: {} });
      await expect(authenticator.onRequest(request)).resolves.toBeUndefined();
      expect(verify).not.toHaveBeenCalled();
      expect(record).not.toHaveBeenCalled();
      expect(request.principal).toBeUndefined();
    });

    it('skips a public route', async () => {
      const { authenticator, verify, record } = setup();
      const request = fakeRequest({ config: { public: true }, headers: {} });
      await expect(authenticator.onRequest(request)).resolves.toBeUndefined();
      expect(verify).not.toHaveBeenCalled();
      expect(record).not.toHaveBeenCalled();
      expect(request.principal).toBeUndefined();
    });

    it('does not skip a route whose public flag is false', async () => {
      const { authenticator } = setup();
      const error = await rejection(
        authenticator.onRequest(fakeRequest({ config: { public: false }, headers: {} })),
      );
      expect(error.status).toBe(401);
    });
  });

  describe('v2 bearer credentials', () => {
    it.each([
      ['missing', {}],
      ['empty', { authorization: '' }],
      ['another scheme', { authorization: `Basic ${SECRET}` }],
      ['no token', { authorization: 'Bearer' }],
      ['a token with a space', { authorization: `Bearer ${SECRET} extra` }],
      ['in X-Api-Key only', { 'x-api-key': SECRET }],
    ])('rejects a %s Authorization header with 401 and a challenge', async (_name, headers) => {
      const { authenticator, verify, record } = setup();
      const error = await rejection(authenticator.onRequest(fakeRequest({ headers })));
      expect(error.status).toBe(401);
      expect(error.message).toBe(AUTH_MESSAGES.missingBearer);
      expect(error.message).toBe('missing or malformed bearer token');
      expect(error.headers).toEqual({ 'www-authenticate': 'Bearer' });
      expect(verify).not.toHaveBeenCalled();
      expect(record).not.toHaveBeenCalled();
    });

    it('rejects two Authorization headers with 400 instead of using the first', async () => {
      const { authenticator, verify } = setup();
      const headers = { authorization: [`Bearer ${SECRET}`, 'Bearer other'] };
      const error = await rejection(authenticator.onRequest(fakeRequest({ headers })));
      expect(error.status).toBe(400);
      expect(error.message).toBe('the authorization header must be given only once');
      expect(verify).not.toHaveBeenCalled();
    });

    it.each([
      ['a wrong prefix', `envoi-pk-${'a'.repeat(64)}`],
      ['a short secret', `envoi-sk-${'a'.repeat(63)}`],
      ['a long secret', `envoi-sk-${'a'.repeat(65)}`],
      ['a non-alphanumeric secret', `envoi-sk-${'a'.repeat(63)}_`],
      ['a random token', 'not-a-key'],
    ])('rejects %s as an invalid API key without asking the verifier', async (_name, token) => {
      const { authenticator, verify, record } = setup();
      const error = await rejection(
        authenticator.onRequest(fakeRequest({ headers: { authorization: `Bearer ${token}` } })),
      );
      expect(error.status).toBe(401);
      expect(error.message).toBe('invalid API key');
      expect(error.headers).toEqual({ 'www-authenticate': 'Bearer' });
      expect(verify).not.toHaveBeenCalled();
      expect(record).not.toHaveBeenCalled();
    });

    it('rejects a well-formed key the verifier does not know', async () => {
      const { authenticator, verify, record } = setup(null);
      const request = fakeRequest();
      const error = await rejection(authenticator.onRequest(request));
      expect(error.status).toBe(401);
      expect(error.message).toBe('invalid API key');
      expect(error.headers).toEqual({ 'www-authenticate': 'Bearer' });
      expect(verify).toHaveBeenCalledWith(SECRET, 'req-1');
      expect(record).not.toHaveBeenCalled();
      expect(request.principal).toBeUndefined();
    });

    it('propagates a verifier failure instead of answering 401', async () => {
      const failure = new Error('accounts service down');
      const verify = jest.fn(() => Promise.reject(failure));
      const record = jest.fn();
      const authenticator = new Authenticator(
        { verify } as unknown as ApiKeyCredentials,
        { record } as unknown as KeyUsageRecorder,
      );
      await expect(authenticator.onRequest(fakeRequest())).rejects.toBe(failure);
      expect(record).not.toHaveBeenCalled();
    });

    it('accepts a valid key, sets the principal and records its use once', async () => {
      const found = principal();
      const { authenticator, verify, record } = setup(found);
      const request = fakeRequest({ params: { account_id: ACCOUNT_ID } });
      await authenticator.onRequest(request);
      expect(verify).toHaveBeenCalledTimes(1);
      expect(verify).toHaveBeenCalledWith(SECRET, 'req-1');
      expect(record).toHaveBeenCalledTimes(1);
      expect(record).toHaveBeenCalledWith(KEY_ID);
      expect(request.principal).toBe(found);
    });

    it('tolerates surrounding whitespace in the header', async () => {
      const { authenticator, verify } = setup();
      const request = fakeRequest({ headers: { authorization: `  Bearer ${SECRET}  ` } });
      await authenticator.onRequest(request);
      expect(verify).toHaveBeenCalledWith(SECRET, 'req-1');
      expect(request.principal).toBeDefined();
    });

    it('accepts a route without params', async () => {
      const { authenticator } = setup();
      const request = fakeRequest({ params: undefined });
      await authenticator.onRequest(request);
      expect(request.principal?.key_id).toBe(KEY_ID);
    });
  });

  describe('v1 X-Api-Key credentials', () => {
    const v1 = (headers: Record<string, string | string[] | undefined>, params = {}) =>
      fakeRequest({ url: '/v1/email/send', routeUrl: '/v1/email/send', headers, params });

    it('accepts the key from X-Api-Key', async () => {
      const found = principal();
      const { authenticator, verify, record } = setup(found);
      const request = v1({ 'x-api-key': ` ${SECRET} ` });
      await authenticator.onRequest(request);
      expect(verify).toHaveBeenCalledWith(SECRET, 'req-1');
      expect(record).toHaveBeenCalledTimes(1);
      expect(request.principal).toBe(found);
    });

    it.each([
      ['missing', {}],
      ['empty', { 'x-api-key': '' }],
      ['blank', { 'x-api-key': '   ' }],
      ['given as a bearer token', { authorization: `Bearer ${SECRET}` }],
    ])('rejects a %s X-Api-Key with invalid credentials and no challenge', async (_n, headers) => {
      const { authenticator, verify } = setup();
      const error = await rejection(authenticator.onRequest(v1(headers)));
      expect(error.status).toBe(403);
      expect(error.message).toBe('invalid credentials');
      expect(error.headers).toEqual({});
      expect(verify).not.toHaveBeenCalled();
    });

    it('rejects two X-Api-Key headers with 400', async () => {
      const { authenticator, verify } = setup();
      const error = await rejection(authenticator.onRequest(v1({ 'x-api-key': [SECRET, SECRET] })));
      expect(error.status).toBe(400);
      expect(error.message).toBe('the x-api-key header must be given only once');
      expect(verify).not.toHaveBeenCalled();
    });

    it('rejects a malformed key without asking the verifier', async () => {
      const { authenticator, verify } = setup();
      const error = await rejection(authenticator.onRequest(v1({ 'x-api-key': 'nope' })));
      expect(error.status).toBe(403);
      expect(error.message).toBe('invalid credentials');
      expect(error.headers).toEqual({});
      expect(verify).not.toHaveBeenCalled();
    });

    it('rejects an unknown key with invalid credentials', async () => {
      const { authenticator, verify } = setup(null);
      const error = await rejection(authenticator.onRequest(v1({ 'x-api-key': SECRET })));
      expect(error.status).toBe(403);
      expect(error.message).toBe('invalid credentials');
      expect(error.headers).toEqual({});
      expect(verify).toHaveBeenCalledTimes(1);
    });

    it('answers a foreign account without a challenge', async () => {
      const { authenticator } = setup();
      const error = await rejection(
        authenticator.onRequest(v1({ 'x-api-key': SECRET }, { account_id: OTHER_ACCOUNT_ID })),
      );
      expect(error.status).toBe(403);
      expect(error.message).toBe(AUTH_MESSAGES.wrongAccount);
      expect(error.headers).toEqual({});
    });
  });

  describe('IP allow list', () => {
    it('rejects a client outside the allow list with 403 and records nothing', async () => {
      const { authenticator, record } = setup(principal({ ip_allow_list: ['10.0.0.0/8'] }));
      const request = fakeRequest({ ip: '192.0.2.1' });
      const error = await rejection(authenticator.onRequest(request));
      expect(error.status).toBe(403);
      expect(error.message).toBe(AUTH_MESSAGES.ipNotAllowed);
      expect(record).not.toHaveBeenCalled();
      expect(request.principal).toBeUndefined();
    });

    it('accepts a client inside the allow list', async () => {
      const { authenticator } = setup(principal({ ip_allow_list: ['10.0.0.0/8'] }));
      const request = fakeRequest({ ip: '10.20.30.40' });
      await authenticator.onRequest(request);
      expect(request.principal).toBeDefined();
    });

    it('matches an IPv4-mapped IPv6 client address against an IPv4 entry', async () => {
      const { authenticator } = setup(principal({ ip_allow_list: ['127.0.0.1/32'] }));
      const request = fakeRequest({ ip: '::ffff:127.0.0.1' });
      await authenticator.onRequest(request);
      expect(request.principal).toBeDefined();
    });

    it('accepts any client when the allow list is empty', async () => {
      const { authenticator } = setup(principal({ ip_allow_list: [] }));
      const request = fakeRequest({ ip: '2001:db8::1' });
      await authenticator.onRequest(request);
      expect(request.principal).toBeDefined();
    });

    it('checks the allow list before the account in the path', async () => {
      const { authenticator } = setup(principal({ ip_allow_list: ['10.0.0.0/8'] }));
      const error = await rejection(
        authenticator.onRequest(
          fakeRequest({ ip: '192.0.2.1', params: { account_id: OTHER_ACCOUNT_ID } }),
        ),
      );
      expect(error.status).toBe(403);
    });
  });

  describe('account in the path', () => {
    it.each(['not-a-uuid', '', `${ACCOUNT_ID}x`, ACCOUNT_ID.replace(/-/g, '')])(
      'rejects account_id %j with 400',
      async (accountId) => {
        const { authenticator, record } = setup();
        const error = await rejection(
          authenticator.onRequest(fakeRequest({ params: { account_id: accountId } })),
        );
        expect(error.status).toBe(400);
        expect(error.message).toBe('invalid account_id');
        expect(record).not.toHaveBeenCalled();
      },
    );

    it('rejects another account with 401 and a challenge', async () => {
      const { authenticator, record } = setup();
      const request = fakeRequest({ params: { account_id: OTHER_ACCOUNT_ID } });
      const error = await rejection(authenticator.onRequest(request));
      expect(error.status).toBe(401);
      expect(error.message).toBe('API key does not belong to this account');
      expect(error.headers).toEqual({ 'www-authenticate': 'Bearer' });
      expect(record).not.toHaveBeenCalled();
      expect(request.principal).toBeUndefined();
    });

    it('rejects the parent’s path for a sub-account key', async () => {
      const { authenticator } = setup(principal({ parent_account_id: OTHER_ACCOUNT_ID }));
      const error = await rejection(
        authenticator.onRequest(fakeRequest({ params: { account_id: OTHER_ACCOUNT_ID } })),
      );
      expect(error.status).toBe(401);
    });

    it.each(['suspended', 'parent-suspended', 'deleted'] as const)(
      'refuses a key of a %s account with 401 and records no use',
      async (account_status) => {
        const { authenticator, record } = setup(principal({ account_status }));
        const error = await rejection(
          authenticator.onRequest(fakeRequest({ params: { account_id: ACCOUNT_ID } })),
        );
        expect(error.status).toBe(401);
        expect(error.message).toBe('Account is suspended');
        expect(record).not.toHaveBeenCalled();
      },
    );

    it('accepts its own account written in uppercase', async () => {
      const { authenticator, record } = setup();
      const request = fakeRequest({ params: { account_id: ACCOUNT_ID.toUpperCase() } });
      await authenticator.onRequest(request);
      expect(request.principal?.account_id).toBe(ACCOUNT_ID);
      expect(record).toHaveBeenCalledTimes(1);
    });

    it('ignores other path params', async () => {
      const { authenticator } = setup();
      const request = fakeRequest({ params: { key_id: 'anything' } });
      await authenticator.onRequest(request);
      expect(request.principal).toBeDefined();
    });
  });
});
