import { randomBytes } from 'node:crypto';

import { ResponseCipher } from './response-cipher';

const KEY = 'ab'.repeat(32);
const OTHER_KEY = 'cd'.repeat(32);
const CONTEXT = '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60\norder-42';
const PLAINTEXT = Buffer.from('{"secret_key":"envoi-sk-0123456789"}');

describe('ResponseCipher', () => {
  const cipher = new ResponseCipher(KEY);

  it('opens what it sealed', () => {
    const envelope = cipher.seal(PLAINTEXT, CONTEXT);
    expect(cipher.open(envelope, CONTEXT)).toEqual(PLAINTEXT);
  });

  it('round-trips an empty body and arbitrary bytes', () => {
    const bytes = randomBytes(4096);
    expect(cipher.open(cipher.seal(Buffer.alloc(0), CONTEXT), CONTEXT)).toEqual(Buffer.alloc(0));
    expect(cipher.open(cipher.seal(bytes, CONTEXT), CONTEXT)).toEqual(bytes);
  });

  it('never shows the plaintext and uses a fresh IV every time', () => {
    const first = cipher.seal(PLAINTEXT, CONTEXT);
    const second = cipher.seal(PLAINTEXT, CONTEXT);
    expect(first.includes(PLAINTEXT)).toBe(false);
    expect(first.includes(Buffer.from('envoi-sk-'))).toBe(false);
    expect(first.equals(second)).toBe(false);
    expect(first.length).toBe(12 + 16 + PLAINTEXT.length);
  });

  it.each([
    ['the IV', 0],
    ['the tag', 12],
    ['the ciphertext', 28],
    ['the last byte', -1],
  ])('refuses an envelope with %s altered', (_where, index) => {
    const envelope = cipher.seal(PLAINTEXT, CONTEXT);
    const at = index < 0 ? envelope.length + index : index;
    envelope[at] = (envelope[at] ?? 0) ^ 0x01;
    expect(() => cipher.open(envelope, CONTEXT)).toThrow();
  });

  it('refuses a truncated envelope', () => {
    const envelope = cipher.seal(PLAINTEXT, CONTEXT);
    expect(() => cipher.open(envelope.subarray(0, envelope.length - 1), CONTEXT)).toThrow();
    expect(() => cipher.open(envelope.subarray(0, 20), CONTEXT)).toThrow();
    expect(() => cipher.open(Buffer.alloc(0), CONTEXT)).toThrow();
  });

  it('refuses an envelope cut down to a short authentication tag', () => {
    // iv ‖ the first 4 tag bytes, no ciphertext: must not pass as a valid 32-bit tag.
    const envelope = cipher.seal(Buffer.alloc(0), CONTEXT);
    expect(() => cipher.open(envelope.subarray(0, 16), CONTEXT)).toThrow();
  });

  it('refuses another context (another account or key)', () => {
    const envelope = cipher.seal(PLAINTEXT, CONTEXT);
    expect(() => cipher.open(envelope, `${CONTEXT}x`)).toThrow();
    expect(() => cipher.open(envelope, '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d\norder-42')).toThrow();
  });

  it('refuses an envelope sealed under another key', () => {
    const envelope = new ResponseCipher(OTHER_KEY).seal(PLAINTEXT, CONTEXT);
    expect(() => cipher.open(envelope, CONTEXT)).toThrow();
  });

  it.each(['', 'ab'.repeat(31), 'ab'.repeat(33), 'zz'.repeat(32)])(
    'refuses a key that is not 32 bytes of hex (%s)',
    (hexKey) => {
      expect(() => new ResponseCipher(hexKey)).toThrow(/32-byte key/);
    },
  );
});
