import { randomBytes } from 'node:crypto';

import { AesGcmCipher, SecretDecryptionError } from './aes-gcm-cipher';

const hexKey = () => randomBytes(32).toString('hex');

describe('AesGcmCipher', () => {
  const cipher = new AesGcmCipher(hexKey());

  it('opens what it sealed, under the same context', () => {
    const sealed = cipher.sealText('envoi-whsec-abc', 'webhook:1');
    expect(sealed).not.toContain('envoi-whsec-abc');
    expect(cipher.openText(sealed, 'webhook:1')).toBe('envoi-whsec-abc');
  });

  it('seals the same text differently each time', () => {
    expect(cipher.sealText('x', 'c')).not.toBe(cipher.sealText('x', 'c'));
  });

  it('refuses another context, another key, an altered or truncated envelope', () => {
    const sealed = cipher.seal(Buffer.from('secret'), 'webhook:1');
    expect(() => cipher.open(sealed, 'webhook:2')).toThrow(SecretDecryptionError);
    expect(() => new AesGcmCipher(hexKey()).open(sealed, 'webhook:1')).toThrow(
      SecretDecryptionError,
    );
    const altered = Buffer.from(sealed);
    altered[altered.length - 1] = (altered[altered.length - 1] ?? 0) ^ 1;
    expect(() => cipher.open(altered, 'webhook:1')).toThrow(SecretDecryptionError);
    expect(() => cipher.open(sealed.subarray(0, 20), 'webhook:1')).toThrow(SecretDecryptionError);
  });

  it.each(['', 'ab'.repeat(16), 'z'.repeat(64)])('refuses the key %j', (key) => {
    expect(() => new AesGcmCipher(key)).toThrow('64 hex digits');
  });
});
