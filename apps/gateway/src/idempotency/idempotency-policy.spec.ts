import { createHash } from 'node:crypto';

import { ApiError } from '../errors/api-error';
import {
  type ExistingRecord,
  fingerprintDigest,
  IDEMPOTENCY_MESSAGES,
  judgeExistingRecord,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  outcomeAction,
  readIdempotencyKey,
  requestFingerprint,
} from './idempotency-policy';

const BODY = Buffer.from('{"name":"key"}');
const BODY_SHA256 = createHash('sha256').update(BODY).digest('hex');
const PATH = '/v2/accounts/3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60/api-keys';

function invalidKeyError(header: string | string[]): ApiError {
  try {
    readIdempotencyKey(header);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }
  throw new Error('expected an ApiError');
}

describe('readIdempotencyKey', () => {
  it('is undefined when the header is absent', () => {
    expect(readIdempotencyKey(undefined)).toBeUndefined();
  });

  it.each([1, 2, 254, MAX_IDEMPOTENCY_KEY_LENGTH])('accepts a key of %i characters', (length) => {
    const key = 'k'.repeat(length);
    expect(readIdempotencyKey(key)).toBe(key);
  });

  it.each([0, MAX_IDEMPOTENCY_KEY_LENGTH + 1, 300])('rejects a key of %i characters', (length) => {
    const error = invalidKeyError('k'.repeat(length));
    expect(error.status).toBe(400);
    expect(error.message).toBe(IDEMPOTENCY_MESSAGES.invalidKey);
  });

  it('rejects a header given as an array', () => {
    expect(invalidKeyError(['a', 'b']).status).toBe(400);
  });

  it('rejects an empty array', () => {
    expect(invalidKeyError([]).status).toBe(400);
  });

  it('keeps the key exactly as sent (case and punctuation)', () => {
    expect(readIdempotencyKey('Order-42:retry/1')).toBe('Order-42:retry/1');
  });
});

describe('requestFingerprint', () => {
  it('uppercases the method, keeps the path and hashes the body with SHA-256', () => {
    expect(requestFingerprint('post', PATH, BODY)).toEqual({
      method: 'POST',
      path: PATH,
      bodySha256: BODY_SHA256,
    });
  });

  it('strips the query string', () => {
    expect(requestFingerprint('POST', `${PATH}?a=1&b=2`, BODY).path).toBe(PATH);
    expect(requestFingerprint('POST', `${PATH}?`, BODY).path).toBe(PATH);
  });

  it('hashes an empty body', () => {
    expect(requestFingerprint('POST', PATH, Buffer.alloc(0)).bodySha256).toBe(
      'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('tells bodies apart byte for byte', () => {
    const spaced = requestFingerprint('POST', PATH, Buffer.from('{"name": "key"}'));
    expect(spaced.bodySha256).not.toBe(BODY_SHA256);
  });
});

describe('fingerprintDigest', () => {
  const fingerprint = requestFingerprint('POST', PATH, BODY);

  it('is the SHA-256 of method, path and body hash, one a line', () => {
    expect(fingerprintDigest(fingerprint)).toBe(
      createHash('sha256').update(`POST\n${PATH}\n${BODY_SHA256}`).digest('hex'),
    );
  });

  it.each<[string, Partial<typeof fingerprint>]>([
    ['method', { method: 'PUT' }],
    ['path', { path: `${PATH}/other` }],
    ['body', { bodySha256: 'f'.repeat(64) }],
  ])('changes with the %s', (_what, difference) => {
    expect(fingerprintDigest({ ...fingerprint, ...difference })).not.toBe(
      fingerprintDigest(fingerprint),
    );
  });
});

describe('judgeExistingRecord', () => {
  const fingerprint = requestFingerprint('POST', PATH, BODY);

  function record(overrides: Partial<ExistingRecord> = {}): ExistingRecord {
    return { ...fingerprint, state: 'completed', secondsLeft: 86_400, ...overrides };
  }

  it.each<[string, Partial<ExistingRecord>]>([
    ['method', { method: 'PUT' }],
    ['path', { path: `${PATH}/other` }],
    ['body', { bodySha256: 'f'.repeat(64) }],
  ])('is a mismatch when the %s differs', (_what, difference) => {
    for (const state of ['executing', 'held', 'completed'] as const) {
      expect(judgeExistingRecord(record({ ...difference, state }), fingerprint)).toEqual({
        kind: 'mismatch',
      });
    }
  });

  it('asks to retry in a second while executing', () => {
    expect(
      judgeExistingRecord(record({ state: 'executing', secondsLeft: 290 }), fingerprint),
    ).toEqual({ kind: 'in-progress', retryAfterSeconds: 1 });
  });

  it('asks to retry when the lease of a held key ends', () => {
    expect(judgeExistingRecord(record({ state: 'held', secondsLeft: 42 }), fingerprint)).toEqual({
      kind: 'in-progress',
      retryAfterSeconds: 42,
    });
  });

  it.each([0, -3])('asks a held key to retry after at least 1 second (%i left)', (secondsLeft) => {
    expect(judgeExistingRecord(record({ state: 'held', secondsLeft }), fingerprint)).toEqual({
      kind: 'in-progress',
      retryAfterSeconds: 1,
    });
  });

  it('replays a completed record', () => {
    expect(judgeExistingRecord(record({ state: 'completed' }), fingerprint)).toEqual({
      kind: 'replay',
    });
  });
});

describe('outcomeAction', () => {
  it.each([200, 201, 202, 204, 299])('stores a standard %i in clear', (status) => {
    expect(outcomeAction('standard', status)).toEqual({ kind: 'store', encrypted: false });
  });

  it.each([400, 404, 409, 499])('stores a standard %i in clear', (status) => {
    expect(outcomeAction('standard', status)).toEqual({ kind: 'store', encrypted: false });
  });

  it.each([200, 201, 299])('stores a secret-bearing %i encrypted', (status) => {
    expect(outcomeAction('secret', status)).toEqual({ kind: 'store', encrypted: true });
  });

  it.each([400, 403, 409, 422, 499])('holds the key after a secret-bearing %i', (status) => {
    expect(outcomeAction('secret', status)).toEqual({ kind: 'hold' });
  });

  it('releases the key after a standard 422 (the key was committed with another request)', () => {
    expect(outcomeAction('standard', 422)).toEqual({ kind: 'release' });
  });

  it.each([500, 502, 503, 504])('releases the key after a %i in either mode', (status) => {
    expect(outcomeAction('standard', status)).toEqual({ kind: 'release' });
    expect(outcomeAction('secret', status)).toEqual({ kind: 'release' });
  });
});
