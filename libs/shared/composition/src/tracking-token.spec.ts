import { createHmac } from 'node:crypto';

import { readTrackingToken, trackingToken } from './tracking-token';

const SECRET = Buffer.alloc(32, 7);
const OTHER_SECRET = Buffer.alloc(32, 8);
const MESSAGE_ID = '01891234-5678-7abc-8def-0123456789ab';
const OTHER_MESSAGE_ID = '01891234-5678-7abc-8def-0123456789ac';

/** Builds a token by hand, per the documented layout, with a valid MAC over any payload. */
function forge(secret: Buffer, payload: Buffer): string {
  const mac = createHmac('sha256', secret)
    .update('envoi-tracking-v1')
    .update(payload)
    .digest()
    .subarray(0, 16);
  return Buffer.concat([payload, mac]).toString('base64url');
}

function payload(kindByte: number, index: number, id = MESSAGE_ID): Buffer {
  const bytes = Buffer.alloc(19);
  bytes.write(id.replace(/-/g, ''), 0, 16, 'hex');
  bytes[16] = kindByte;
  bytes.writeUInt16BE(index, 17);
  return bytes;
}

describe('trackingToken', () => {
  it('makes a 47-character URL-safe token', () => {
    const token = trackingToken(SECRET, MESSAGE_ID, 'click', 3);

    expect(token).toMatch(/^[A-Za-z0-9_-]{47}$/);
    expect(encodeURIComponent(token)).toBe(token);
  });

  it('follows the documented layout', () => {
    expect(trackingToken(SECRET, MESSAGE_ID, 'open', 0)).toBe(forge(SECRET, payload(1, 0)));
    expect(trackingToken(SECRET, MESSAGE_ID, 'click', 258)).toBe(forge(SECRET, payload(2, 258)));
  });

  it('is deterministic', () => {
    expect(trackingToken(SECRET, MESSAGE_ID, 'click', 9)).toBe(
      trackingToken(SECRET, MESSAGE_ID, 'click', 9),
    );
  });

  it('differs by message, kind, index and secret', () => {
    const tokens = [
      trackingToken(SECRET, MESSAGE_ID, 'click', 0),
      trackingToken(SECRET, OTHER_MESSAGE_ID, 'click', 0),
      trackingToken(SECRET, MESSAGE_ID, 'open', 0),
      trackingToken(SECRET, MESSAGE_ID, 'click', 1),
      trackingToken(SECRET, MESSAGE_ID, 'click', 256),
      trackingToken(OTHER_SECRET, MESSAGE_ID, 'click', 0),
    ];

    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('ignores the case of the uuid', () => {
    expect(trackingToken(SECRET, MESSAGE_ID.toUpperCase(), 'open', 0)).toBe(
      trackingToken(SECRET, MESSAGE_ID, 'open', 0),
    );
  });

  it.each([-1, 65536, 1.5, Number.NaN, Infinity])('rejects index %p with a RangeError', (index) => {
    expect(() => trackingToken(SECRET, MESSAGE_ID, 'click', index)).toThrow(RangeError);
  });

  it('accepts the index bounds', () => {
    expect(readTrackingToken(SECRET, trackingToken(SECRET, MESSAGE_ID, 'click', 0))?.index).toBe(0);
    expect(
      readTrackingToken(SECRET, trackingToken(SECRET, MESSAGE_ID, 'click', 65535))?.index,
    ).toBe(65535);
  });

  it('rejects a short secret', () => {
    expect(() => trackingToken(Buffer.alloc(31, 1), MESSAGE_ID, 'open', 0)).toThrow(RangeError);
  });

  it.each(['', 'not-a-uuid', `${MESSAGE_ID}0`, MESSAGE_ID.replace(/-/g, ''), `{${MESSAGE_ID}}`])(
    'rejects message id %p',
    (id) => {
      expect(() => trackingToken(SECRET, id, 'open', 0)).toThrow(TypeError);
    },
  );

  it('rejects an unknown kind', () => {
    expect(() => trackingToken(SECRET, MESSAGE_ID, 'bounce' as never, 0)).toThrow(TypeError);
    expect(() => trackingToken(SECRET, MESSAGE_ID, 'toString' as never, 0)).toThrow(TypeError);
  });
});

describe('readTrackingToken', () => {
  it('round-trips every kind', () => {
    expect(readTrackingToken(SECRET, trackingToken(SECRET, MESSAGE_ID, 'open', 0))).toEqual({
      messageId: MESSAGE_ID,
      kind: 'open',
      index: 0,
    });
    expect(readTrackingToken(SECRET, trackingToken(SECRET, MESSAGE_ID, 'click', 42))).toEqual({
      messageId: MESSAGE_ID,
      kind: 'click',
      index: 42,
    });
  });

  it('returns the uuid in lower case', () => {
    const token = trackingToken(SECRET, 'ABCDEF12-3456-7ABC-8DEF-0123456789AB', 'click', 1);

    expect(readTrackingToken(SECRET, token)?.messageId).toBe(
      'abcdef12-3456-7abc-8def-0123456789ab',
    );
  });

  it('works with secrets longer than 32 bytes', () => {
    const secret = Buffer.alloc(64, 3);

    expect(readTrackingToken(secret, trackingToken(secret, MESSAGE_ID, 'open', 5))?.index).toBe(5);
  });

  it('rejects a token under another secret', () => {
    const token = trackingToken(SECRET, MESSAGE_ID, 'click', 1);

    expect(readTrackingToken(OTHER_SECRET, token)).toBeNull();
  });

  it('rejects every single-byte change', () => {
    const bytes = Buffer.from(trackingToken(SECRET, MESSAGE_ID, 'click', 7), 'base64url');

    for (let i = 0; i < bytes.length; i++) {
      for (const flip of [0x01, 0x80, 0xff]) {
        const tampered = Buffer.from(bytes);
        tampered[i] = (tampered[i] ?? 0) ^ flip;
        expect(readTrackingToken(SECRET, tampered.toString('base64url'))).toBeNull();
      }
    }
  });

  it('rejects every single-character change, including non-canonical spellings', () => {
    const token = trackingToken(SECRET, MESSAGE_ID, 'click', 7);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    let tried = 0;

    for (let i = 0; i < token.length; i++) {
      for (const c of alphabet) {
        if (c === token[i]) continue;
        tried++;
        expect(readTrackingToken(SECRET, token.slice(0, i) + c + token.slice(i + 1))).toBeNull();
      }
    }
    expect(tried).toBe(47 * 63);
  });

  it('rejects a valid MAC over an unknown kind byte', () => {
    expect(readTrackingToken(SECRET, forge(SECRET, payload(1, 3)))).toEqual({
      messageId: MESSAGE_ID,
      kind: 'open',
      index: 3,
    });
    for (const kindByte of [0, 3, 0x7f, 0xff]) {
      expect(readTrackingToken(SECRET, forge(SECRET, payload(kindByte, 3)))).toBeNull();
    }
  });

  it('rejects a MAC made without the domain prefix', () => {
    const body = payload(2, 0);
    const mac = createHmac('sha256', SECRET).update(body).digest().subarray(0, 16);

    expect(readTrackingToken(SECRET, Buffer.concat([body, mac]).toString('base64url'))).toBeNull();
  });

  it('rejects a truncated or extended token', () => {
    const token = trackingToken(SECRET, MESSAGE_ID, 'click', 7);

    expect(readTrackingToken(SECRET, token.slice(0, -1))).toBeNull();
    expect(readTrackingToken(SECRET, token.slice(1))).toBeNull();
    expect(readTrackingToken(SECRET, `${token}A`)).toBeNull();
    expect(readTrackingToken(SECRET, `${token}=`)).toBeNull();
    expect(readTrackingToken(SECRET, `${token}${token}`)).toBeNull();
  });

  it('rejects standard base64, padding, whitespace and other characters', () => {
    const token = trackingToken(SECRET, MESSAGE_ID, 'click', 7);
    const standard = Buffer.from(token, 'base64url').toString('base64');

    expect(readTrackingToken(SECRET, standard)).toBeNull();
    expect(readTrackingToken(SECRET, ` ${token.slice(1)}`)).toBeNull();
    expect(readTrackingToken(SECRET, `${token.slice(0, -1)}\n`)).toBeNull();
    expect(readTrackingToken(SECRET, `${token.slice(0, -1)}.`)).toBeNull();
    expect(readTrackingToken(SECRET, `${token.slice(0, -1)}é`)).toBeNull();
    expect(readTrackingToken(SECRET, `${token.slice(0, -1)}\u0000`)).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['one character', 'A'],
    ['47 zeros', 'A'.repeat(47)],
    ['128 characters', 'A'.repeat(128)],
    ['129 characters', 'A'.repeat(129)],
    ['10 MB', 'A'.repeat(10 * 1024 * 1024)],
    ['10 MB of junk', '%'.repeat(10 * 1024 * 1024)],
  ])('rejects %s', (_label, token) => {
    expect(readTrackingToken(SECRET, token)).toBeNull();
  });

  it('never throws on values that are not strings or on a bad secret', () => {
    const token = trackingToken(SECRET, MESSAGE_ID, 'open', 0);

    const values: unknown[] = [undefined, null, 42, {}, [], Buffer.from(token)];
    for (const value of values) {
      expect(readTrackingToken(SECRET, value as string)).toBeNull();
    }
    expect(readTrackingToken(Buffer.alloc(0), token)).toBeNull();
    expect(readTrackingToken(SECRET.subarray(0, 31), token)).toBeNull();
    expect(readTrackingToken('secret' as unknown as Buffer, token)).toBeNull();
  });
});
