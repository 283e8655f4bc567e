import { Readable } from 'node:stream';

import { loadConfig } from '@envoi/shared-config';
import type { Logger } from '@envoi/shared-observability';
import type { FastifyReply, FastifyRequest } from 'fastify';

import type { Principal } from '../auth/principal';
import { ApiError } from '../errors/api-error';
import { GatewayConfig } from '../gateway.config';
import type { EdgeRouteConfig } from '../http/edge-route';
import { IdempotencyHooks } from './idempotency.hooks';
import type {
  ClaimResult,
  IdempotencyClaim,
  StoredOutcome,
  StoredRecord,
} from './idempotency.repository';
import { IDEMPOTENCY_MESSAGES, requestFingerprint } from './idempotency-policy';
import type { IdempotencyStore } from './idempotency-store';
import { ResponseCipher } from './response-cipher';

const ACCOUNT_ID = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const KEY = 'order-42';
const URL = `/v2/accounts/${ACCOUNT_ID}/things?verbose=1`;
const BODY = Buffer.from('{"name":"thing"}');
const ENCRYPTION_KEY = 'ab'.repeat(32);
const CLAIM: IdempotencyClaim = { accountId: ACCOUNT_ID, key: KEY, token: 'token-1' };

const config = loadConfig(GatewayConfig, {
  NATS_URL: 'nats://127.0.0.1:4222',
  TLS_CERT_FILE: '/tls/cert.pem',
  TLS_KEY_FILE: '/tls/key.pem',
  CURSOR_SECRET: 'x'.repeat(32),
  DATABASE_URL: 'postgres://envoi@127.0.0.1:5432/envoi',
  IDEMPOTENCY_ENCRYPTION_KEY: ENCRYPTION_KEY,
  IDEMPOTENCY_LEASE_MS: '30000',
  IDEMPOTENCY_TTL_MS: '86400000',
  IDEMPOTENCY_SECRET_TTL_MS: '300000',
});

function fakeStore(claimResult: ClaimResult | Error = { kind: 'claimed', claim: CLAIM }) {
  return {
    claim: jest.fn(() =>
      claimResult instanceof Error ? Promise.reject(claimResult) : Promise.resolve(claimResult),
    ),
    complete: jest.fn<Promise<boolean>, [IdempotencyClaim, StoredOutcome]>(() =>
      Promise.resolve(true),
    ),
    hold: jest.fn<Promise<void>, [IdempotencyClaim]>(() => Promise.resolve()),
    release: jest.fn<Promise<void>, [IdempotencyClaim]>(() => Promise.resolve()),
  };
}

function setup(store = fakeStore()) {
  const logger = { warn: jest.fn(), error: jest.fn(), info: jest.fn(), debug: jest.fn() };
  const hooks = new IdempotencyHooks(
    store as unknown as IdempotencyStore,
    config,
    logger as unknown as Logger,
  );
  return { hooks, store, logger };
}

interface RequestInit {
  config?: EdgeRouteConfig;
  key?: string | string[];
  principal?: boolean;
  rawBody?: Buffer;
}

function fakeRequest(init: RequestInit = {}): FastifyRequest {
  return {
    id: 'req-1',
    method: 'POST',
    url: URL,
    headers: init.key === undefined ? {} : { 'idempotency-key': init.key },
    rawBody: 'rawBody' in init ? init.rawBody : BODY,
    principal:
      init.principal === false ? undefined : ({ account_id: ACCOUNT_ID } as unknown as Principal),
    routeOptions: { config: init.config ?? { idempotency: 'standard' } },
  } as unknown as FastifyRequest;
}

interface FakeReply {
  statusCode: number;
  getHeader(name: string): string | undefined;
  status(status: number): FakeReply;
  header(name: string, value: string): FakeReply;
  send(body: unknown): FakeReply;
}

function fakeReply(statusCode = 200, contentType: string | null = 'application/json') {
  const sent: { status?: number; headers: Record<string, string>; body?: unknown } = {
    headers: {},
  };
  const reply: FakeReply = {
    statusCode,
    getHeader: (name) =>
      name === 'content-type' && contentType !== null ? contentType : undefined,
    status: (status) => {
      sent.status = status;
      return reply;
    },
    header: (name, value) => {
      sent.headers[name] = value;
      return reply;
    },
    send: (body) => {
      sent.body = body;
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, sent };
}

function existing(overrides: Partial<StoredRecord> = {}): ClaimResult {
  return {
    kind: 'existing',
    record: {
      ...requestFingerprint('POST', URL, BODY),
      state: 'completed',
      secondsLeft: 3600,
      statusCode: 201,
      contentType: 'application/json; charset=utf-8',
      responseBody: Buffer.from('{"id":"1"}'),
      encrypted: false,
      ...overrides,
    },
  };
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('IdempotencyHooks.preHandler', () => {
  it('ignores routes without an idempotency mode, whatever the header', async () => {
    const { hooks, store } = setup();
    const request = fakeRequest({ config: {}, key: 'k'.repeat(300) });
    await expect(hooks.preHandler(request, fakeReply().reply)).resolves.toBeUndefined();
    expect(store.claim).not.toHaveBeenCalled();
    expect(request.idempotency).toBeUndefined();
  });

  it('ignores unauthenticated requests', async () => {
    const { hooks, store } = setup();
    await hooks.preHandler(fakeRequest({ key: KEY, principal: false }), fakeReply().reply);
    expect(store.claim).not.toHaveBeenCalled();
  });

  it('does nothing without an Idempotency-Key', async () => {
    const { hooks, store } = setup();
    const request = fakeRequest();
    await hooks.preHandler(request, fakeReply().reply);
    expect(store.claim).not.toHaveBeenCalled();
    expect(request.idempotency).toBeUndefined();
  });

  it('answers 400 for a key that is too long, before touching the store', async () => {
    const { hooks, store } = setup();
    const error = await rejection(
      hooks.preHandler(fakeRequest({ key: 'k'.repeat(256) }), fakeReply().reply),
    );
    expect(error.status).toBe(400);
    expect(store.claim).not.toHaveBeenCalled();
  });

  it('claims the key with the fingerprint of the raw body, without the query string', async () => {
    const { hooks, store } = setup();
    const request = fakeRequest({ key: KEY });
    await expect(hooks.preHandler(request, fakeReply().reply)).resolves.toBeUndefined();
    const expectedFingerprint = requestFingerprint(
      'POST',
      `/v2/accounts/${ACCOUNT_ID}/things`,
      BODY,
    );
    expect(store.claim).toHaveBeenCalledWith(ACCOUNT_ID, KEY, expectedFingerprint, 30_000);
    expect(request.idempotency).toEqual({
      claim: CLAIM,
      fingerprint: expectedFingerprint,
      mode: 'standard',
      settled: false,
    });
  });

  it('fingerprints a request without a body as an empty body', async () => {
    const { hooks, store } = setup();
    await hooks.preHandler(fakeRequest({ key: KEY, rawBody: undefined }), fakeReply().reply);
    expect(store.claim).toHaveBeenCalledWith(
      ACCOUNT_ID,
      KEY,
      requestFingerprint('POST', URL, Buffer.alloc(0)),
      30_000,
    );
  });

  it('answers 503 with Retry-After when the store is unavailable', async () => {
    const { hooks, logger } = setup(fakeStore(new Error('connection refused')));
    const error = await rejection(hooks.preHandler(fakeRequest({ key: KEY }), fakeReply().reply));
    expect(error.status).toBe(503);
    expect(error.headers).toEqual({ 'retry-after': '5' });
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  it('answers 422 without the idempotency headers for another payload', async () => {
    const { hooks } = setup(fakeStore(existing({ bodySha256: 'f'.repeat(64) })));
    const error = await rejection(hooks.preHandler(fakeRequest({ key: KEY }), fakeReply().reply));
    expect(error.status).toBe(422);
    expect(error.message).toBe(IDEMPOTENCY_MESSAGES.mismatch);
    expect(error.headers).toEqual({});
  });

  it('answers 409 with the in-progress header pair while executing', async () => {
    const { hooks } = setup(fakeStore(existing({ state: 'executing', secondsLeft: 200 })));
    const error = await rejection(hooks.preHandler(fakeRequest({ key: KEY }), fakeReply().reply));
    expect(error.status).toBe(409);
    expect(error.message).toBe(IDEMPOTENCY_MESSAGES.inProgress);
    expect(error.headers).toEqual({ 'idempotent-replayed': 'false', 'retry-after': '1' });
  });

  it('answers 409 until the lease ends for a held key', async () => {
    const { hooks } = setup(fakeStore(existing({ state: 'held', secondsLeft: 17 })));
    const error = await rejection(hooks.preHandler(fakeRequest({ key: KEY }), fakeReply().reply));
    expect(error.headers).toEqual({ 'idempotent-replayed': 'false', 'retry-after': '17' });
  });

  it('replays a completed outcome with its status, type and exact bytes', async () => {
    const { hooks } = setup(fakeStore(existing()));
    const { reply, sent } = fakeReply();
    await expect(hooks.preHandler(fakeRequest({ key: KEY }), reply)).resolves.toBe(reply);
    expect(sent).toEqual({
      status: 201,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'idempotent-replayed': 'true',
      },
      body: Buffer.from('{"id":"1"}'),
    });
  });

  it('decrypts an encrypted outcome under the account and key', async () => {
    const plaintext = Buffer.from('{"secret_key":"envoi-sk-1"}');
    const envelope = new ResponseCipher(ENCRYPTION_KEY).seal(plaintext, `${ACCOUNT_ID}\n${KEY}`);
    const { hooks } = setup(fakeStore(existing({ responseBody: envelope, encrypted: true })));
    const { reply, sent } = fakeReply();
    await hooks.preHandler(fakeRequest({ key: KEY, config: { idempotency: 'secret' } }), reply);
    expect(sent.body).toEqual(plaintext);
  });

  it('replays an empty stored body with a JSON type when none was stored', async () => {
    const { hooks } = setup(
      fakeStore(existing({ statusCode: 204, contentType: null, responseBody: null })),
    );
    const { reply, sent } = fakeReply();
    await hooks.preHandler(fakeRequest({ key: KEY }), reply);
    expect(sent.status).toBe(204);
    expect(sent.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(sent.body).toEqual(Buffer.alloc(0));
  });
});

describe('IdempotencyHooks.onSend', () => {
  async function claimed(mode: 'standard' | 'secret', store = fakeStore()) {
    const context = setup(store);
    const request = fakeRequest({ key: KEY, config: { idempotency: mode } });
    await context.hooks.preHandler(request, fakeReply().reply);
    return { ...context, request };
  }

  it('passes the payload through untouched when nothing was claimed', async () => {
    const { hooks, store } = setup();
    const payload = '{"a":1}';
    await expect(hooks.onSend(fakeRequest(), fakeReply().reply, payload)).resolves.toBe(payload);
    expect(store.complete).not.toHaveBeenCalled();
  });

  it('stores a standard outcome in clear for the replay lifetime', async () => {
    const { hooks, store, request } = await claimed('standard');
    const payload = '{"id":"é"}';
    const { reply } = fakeReply(201, 'application/json; charset=utf-8');
    await expect(hooks.onSend(request, reply, payload)).resolves.toBe(payload);
    expect(store.complete).toHaveBeenCalledWith(CLAIM, {
      statusCode: 201,
      contentType: 'application/json; charset=utf-8',
      body: Buffer.from(payload, 'utf8'),
      encrypted: false,
      ttlMs: 86_400_000,
    });
  });

  it('stores a standard 4xx', async () => {
    const { hooks, store, request } = await claimed('standard');
    await hooks.onSend(request, fakeReply(404).reply, '{"message":"not found"}');
    expect(store.complete).toHaveBeenCalledWith(
      CLAIM,
      expect.objectContaining({ statusCode: 404 }),
    );
  });

  it('stores a Buffer payload and an empty one', async () => {
    const first = await claimed('standard');
    await first.hooks.onSend(first.request, fakeReply(200).reply, Buffer.from([1, 2, 3]));
    expect(first.store.complete.mock.calls[0]?.[1].body).toEqual(Buffer.from([1, 2, 3]));
    const second = await claimed('standard');
    await second.hooks.onSend(second.request, fakeReply(204, null).reply, undefined);
    expect(second.store.complete.mock.calls[0]?.[1]).toMatchObject({
      body: Buffer.alloc(0),
      contentType: null,
    });
  });

  it('stores a secret-bearing 201 encrypted, for the secret lifetime', async () => {
    const { hooks, store, request } = await claimed('secret');
    const payload = '{"secret_key":"envoi-sk-very-secret"}';
    await hooks.onSend(request, fakeReply(201).reply, payload);
    const outcome = store.complete.mock.calls[0]?.[1];
    expect(outcome).toMatchObject({ statusCode: 201, encrypted: true, ttlMs: 300_000 });
    expect(outcome?.body.includes(Buffer.from('envoi-sk-very-secret'))).toBe(false);
    const opened = new ResponseCipher(ENCRYPTION_KEY).open(
      outcome?.body ?? Buffer.alloc(0),
      `${ACCOUNT_ID}\n${KEY}`,
    );
    expect(opened.toString('utf8')).toBe(payload);
  });

  it('holds the key after a secret-bearing 4xx', async () => {
    const { hooks, store, request } = await claimed('secret');
    await hooks.onSend(request, fakeReply(400).reply, '{"message":"bad"}');
    expect(store.hold).toHaveBeenCalledWith(CLAIM);
    expect(store.complete).not.toHaveBeenCalled();
    expect(store.release).not.toHaveBeenCalled();
  });

  it.each(['standard', 'secret'] as const)('releases the key after a 5xx (%s)', async (mode) => {
    const { hooks, store, request } = await claimed(mode);
    await hooks.onSend(request, fakeReply(500).reply, '{"message":"internal server error"}');
    expect(store.release).toHaveBeenCalledWith(CLAIM);
    expect(store.complete).not.toHaveBeenCalled();
  });

  it('releases the key when the payload is a stream it cannot store', async () => {
    const { hooks, store, request } = await claimed('standard');
    await hooks.onSend(request, fakeReply(200).reply, Readable.from(['x']));
    expect(store.release).toHaveBeenCalledWith(CLAIM);
  });

  it('still sends the response when the outcome cannot be recorded', async () => {
    const store = fakeStore();
    store.complete.mockRejectedValue(new Error('database gone'));
    const { hooks, request, logger } = await claimed('standard', store);
    await expect(hooks.onSend(request, fakeReply(201).reply, '{}')).resolves.toBe('{}');
    expect(logger.error).toHaveBeenCalledTimes(1);
  });

  it('settles once, and onResponse then leaves the key alone', async () => {
    const { hooks, store, request } = await claimed('standard');
    await hooks.onSend(request, fakeReply(201).reply, '{}');
    await hooks.onSend(request, fakeReply(500).reply, '{}');
    hooks.onResponse(request);
    expect(store.complete).toHaveBeenCalledTimes(1);
    expect(store.release).not.toHaveBeenCalled();
  });
});

describe('IdempotencyHooks.onResponse', () => {
  it('releases a claim whose response never went through onSend', async () => {
    const { hooks, store } = setup();
    const request = fakeRequest({ key: KEY });
    await hooks.preHandler(request, fakeReply().reply);
    hooks.onResponse(request);
    hooks.onResponse(request);
    expect(store.release).toHaveBeenCalledTimes(1);
    expect(store.release).toHaveBeenCalledWith(CLAIM);
  });

  it('logs a failed release instead of rejecting', async () => {
    const store = fakeStore();
    const failed = Promise.reject(new Error('database gone'));
    store.release.mockReturnValue(failed);
    const { hooks, logger } = setup(store);
    const request = fakeRequest({ key: KEY });
    await hooks.preHandler(request, fakeReply().reply);
    hooks.onResponse(request);
    await failed.catch(() => undefined);
    await new Promise((resolve) => setImmediate(resolve));
    expect(logger.error).toHaveBeenCalledTimes(1);
  });

  it('does nothing for a request without a claim', () => {
    const { hooks, store } = setup();
    hooks.onResponse(fakeRequest());
    expect(store.release).not.toHaveBeenCalled();
  });
});
