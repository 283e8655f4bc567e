import net from 'node:net';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { request } from '../support/api-client';
import { e2eEnvironment } from '../support/environment';

const UNKNOWN_KEY = `envoi-sk-${'a'.repeat(64)}`;

function expectRequestId(headers: Record<string, unknown>): void {
  expect(headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
}

describe('authentication at the HTTPS edge', () => {
  let session: AccountSession;
  let other: AccountSession;

  beforeAll(async () => {
    session = await createAccountSession();
    other = await createAccountSession();
  });
  afterAll(() => closeSessions());

  it('answers GET /v2/ping with pong for a valid key', async () => {
    const response = await session.api.get('/v2/ping');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: 'pong' });
    expectRequestId(response.headers);
  });

  it('refuses plain HTTP on the HTTPS port with a clear error', async () => {
    const { httpsPort } = e2eEnvironment();
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(httpsPort, '127.0.0.1', () => {
        socket.write('GET /v2/ping HTTP/1.1\r\nHost: localhost\r\n\r\n');
      });
      let data = '';
      socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
      message: expect.stringContaining('HTTPS') as unknown,
    });
  });

  it.each([
    ['no Authorization header', {}],
    ['another scheme', { authorization: `Basic ${UNKNOWN_KEY}` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
    ['two tokens', { authorization: `Bearer ${UNKNOWN_KEY} ${UNKNOWN_KEY}` }],
  ])('rejects %s with 401 and a WWW-Authenticate challenge', async (_, headers) => {
    const response = await request('GET', '/v2/ping', { headers });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: 'missing or malformed bearer token' });
    expect(response.headers['www-authenticate']).toBe('Bearer');
    expectRequestId(response.headers);
  });

  it.each([
    ['an unknown key', UNKNOWN_KEY],
    ['a key of the wrong format', 'envoi-sk-short'],
    ['a key with another prefix', `aha-sk-${'a'.repeat(64)}`],
  ])('rejects %s with 401 invalid API key', async (_, key) => {
    const response = await request('GET', '/v2/ping', {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: 'invalid API key' });
  });

  it('never authenticates with a token in the query string', async () => {
    const response = await request('GET', `/v2/ping?api_key=${session.created.api_key.secret_key}`);
    expect(response.status).toBe(401);
  });

  it('rejects a deleted key at once, on every request after the delete', async () => {
    const key = await createKey(session, ['accounts:read']);
    expect((await key.client.get('/v2/ping')).status).toBe(200);
    const deleted = await session.api.delete(session.path(`/api-keys/${key.id}`));
    expect(deleted.status).toBe(200);
    const after = await key.client.get('/v2/ping');
    expect(after.status).toBe(401);
    expect(after.body).toEqual({ message: 'invalid API key' });
  });

  it("answers 401 when a key is used on another account's path, never with its data", async () => {
    const response = await session.api.get(other.path());
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ message: 'API key does not belong to this account' });
    const keys = await session.api.get(other.path('/api-keys'));
    expect(keys.status).toBe(401);
    expect(keys.text).not.toContain(other.accountId);
  });

  it('answers 400 for an account id that is not a uuid', async () => {
    const response = await session.api.get('/v2/accounts/not-a-uuid');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ message: 'invalid account_id' });
  });

  it('authenticates before reading the body: malformed JSON without a key is 401', async () => {
    const response = await request('POST', session.path('/api-keys'), { rawBody: '{not json' });
    expect(response.status).toBe(401);
  });

  it('answers unknown routes with 404 and a {message} body', async () => {
    const response = await session.api.get('/v2/nothing-here');
    expect(response.status).toBe(404);
    expect(Object.keys(response.body as object)).toEqual(['message']);
    expectRequestId(response.headers);
  });
});
