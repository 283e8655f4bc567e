import { randomBytes } from 'node:crypto';

import { DkimKeyCipher, DkimKeyDecryptionError } from './dkim-key-cipher';

const KEY = 'a'.repeat(64);
const DOMAIN_ID = '6a0b9a38-0000-4000-8000-000000000001';
const PEM =
  '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n';

describe('DkimKeyCipher', () => {
  const cipher = new DkimKeyCipher(KEY);

  it('round-trips, and never shows the plaintext', () => {
    const sealed = cipher.seal(PEM, DOMAIN_ID);

    expect(sealed.includes(Buffer.from('PRIVATE KEY'))).toBe(false);
    expect(sealed.includes(Buffer.from('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC'))).toBe(false);
    expect(sealed[0]).toBe(1);
    expect(cipher.open(sealed, DOMAIN_ID)).toBe(PEM);
  });

  it('uses a fresh IV every time', () => {
    expect(cipher.seal(PEM, DOMAIN_ID).equals(cipher.seal(PEM, DOMAIN_ID))).toBe(false);
  });

  it('does not open a key sealed for another domain', () => {
    const sealed = cipher.seal(PEM, DOMAIN_ID);

    expect(() => cipher.open(sealed, '6a0b9a38-0000-4000-8000-000000000002')).toThrow(
      DkimKeyDecryptionError,
    );
  });

  it('detects tampering', () => {
    const sealed = cipher.seal(PEM, DOMAIN_ID);
    const last = sealed.length - 1;
    sealed[last] = (sealed[last] ?? 0) ^ 1;

    expect(() => cipher.open(sealed, DOMAIN_ID)).toThrow('does not authenticate');
  });

  it('tells a wrong encryption key apart', () => {
    const sealed = cipher.seal(PEM, DOMAIN_ID);

    expect(() =>
      new DkimKeyCipher(randomBytes(32).toString('hex')).open(sealed, DOMAIN_ID),
    ).toThrow('sealed with another DKIM_ENCRYPTION_KEY');
    expect(() => cipher.open(Buffer.from([9, 9, 9]), DOMAIN_ID)).toThrow('not a sealed DKIM key');
  });

  it('needs a 256-bit hex key', () => {
    expect(() => new DkimKeyCipher('abc')).toThrow('64 hex digits');
  });
});
