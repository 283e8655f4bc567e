import { createHmac } from 'node:crypto';

import { CursorCodec } from './cursor-codec';

const SECRET = 'cursor-secret-of-at-least-32-chars!!';
const ACCOUNT = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60';
const OTHER_ACCOUNT = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

/** A cursor over any body, correctly signed with the codec's secret. */
function signed(body: string, secret = SECRET): string {
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
}

const encodeBody = (payload: unknown) => Buffer.from(JSON.stringify(payload)).toString('base64url');

describe('CursorCodec', () => {
  const codec = new CursorCodec(SECRET);

  it('round-trips a position for the same account and list', () => {
    const cursor = codec.encode(ACCOUNT, 'api-keys', '42');
    expect(codec.decode(cursor, ACCOUNT, 'api-keys')).toBe('42');
  });

  it('round-trips an empty and a non-ASCII position', () => {
    expect(codec.decode(codec.encode(ACCOUNT, 'l', ''), ACCOUNT, 'l')).toBe('');
    expect(codec.decode(codec.encode(ACCOUNT, 'l', 'ü.é/+='), ACCOUNT, 'l')).toBe('ü.é/+=');
  });

  it('produces an opaque, URL-safe cursor of two parts', () => {
    const cursor = codec.encode(ACCOUNT, 'api-keys', '42');
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain('42');
  });

  it('is deterministic', () => {
    expect(codec.encode(ACCOUNT, 'members', '7')).toBe(codec.encode(ACCOUNT, 'members', '7'));
  });

  it('rejects a cursor issued to another account', () => {
    const cursor = codec.encode(OTHER_ACCOUNT, 'api-keys', '42');
    expect(codec.decode(cursor, ACCOUNT, 'api-keys')).toBeNull();
  });

  it('rejects a cursor of another list', () => {
    const cursor = codec.encode(ACCOUNT, 'api-keys', '42');
    expect(codec.decode(cursor, ACCOUNT, 'members')).toBeNull();
  });

  it('rejects a cursor signed with another secret', () => {
    const cursor = new CursorCodec('another-secret-of-at-least-32-chars').encode(
      ACCOUNT,
      'api-keys',
      '42',
    );
    expect(codec.decode(cursor, ACCOUNT, 'api-keys')).toBeNull();
  });

  it('rejects a tampered signature', () => {
    const cursor = codec.encode(ACCOUNT, 'api-keys', '42');
    const [body, signature] = cursor.split('.');
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    expect(codec.decode(`${body}.${flipped}`, ACCOUNT, 'api-keys')).toBeNull();
    expect(codec.decode(`${body}.${signature.slice(1)}`, ACCOUNT, 'api-keys')).toBeNull();
    expect(codec.decode(`${body}.${signature}A`, ACCOUNT, 'api-keys')).toBeNull();
  });

  it('rejects a tampered body', () => {
    const cursor = codec.encode(ACCOUNT, 'api-keys', '42');
    const [, signature] = cursor.split('.');
    const forged = encodeBody({ a: ACCOUNT, r: 'api-keys', p: '1' });
    expect(codec.decode(`${forged}.${signature}`, ACCOUNT, 'api-keys')).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['a body only', 'abc'],
    ['a trailing dot', 'abc.'],
    ['a leading dot', '.abc'],
    ['only a dot', '.'],
  ])('rejects %s', (_name, cursor) => {
    expect(codec.decode(cursor, ACCOUNT, 'api-keys')).toBeNull();
  });

  it('rejects an extra dot, even after a valid cursor', () => {
    const cursor = codec.encode(ACCOUNT, 'api-keys', '42');
    expect(codec.decode(`${cursor}.`, ACCOUNT, 'api-keys')).toBeNull();
    expect(codec.decode(`${cursor}.x`, ACCOUNT, 'api-keys')).toBeNull();
  });

  it('rejects non-base64 garbage', () => {
    expect(codec.decode('!!!.???', ACCOUNT, 'api-keys')).toBeNull();
    expect(codec.decode('not base64.at all', ACCOUNT, 'api-keys')).toBeNull();
  });

  it('rejects correctly signed bodies that are not a valid payload', () => {
    const bodies = [
      Buffer.from('not json').toString('base64url'),
      encodeBody(null),
      encodeBody(5),
      encodeBody([ACCOUNT, 'api-keys', '42']),
      encodeBody({ a: ACCOUNT, r: 'api-keys' }),
      encodeBody({ a: ACCOUNT, r: 'api-keys', p: 42 }),
      encodeBody({ a: ACCOUNT, p: '42' }),
    ];
    for (const body of bodies) {
      expect(codec.decode(signed(body), ACCOUNT, 'api-keys')).toBeNull();
    }
  });

  it('accepts a correctly signed payload built elsewhere (format is stable)', () => {
    const cursor = signed(encodeBody({ a: ACCOUNT, r: 'api-keys', p: '9' }));
    expect(codec.decode(cursor, ACCOUNT, 'api-keys')).toBe('9');
  });
});
