import { createPublicKey, generateKeyPairSync } from 'node:crypto';

import { generateDkimKeyPair, importDkimPrivateKey, InvalidDkimKeyError } from './dkim-keys';

describe('generateDkimKeyPair', () => {
  it('makes a 2048-bit RSA pair whose public half is the base64 SPKI', async () => {
    const pair = await generateDkimKeyPair();

    expect(pair.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const key = createPublicKey({
      key: Buffer.from(pair.publicKey, 'base64'),
      format: 'der',
      type: 'spki',
    });
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(
      createPublicKey(pair.privateKeyPem)
        .export({ type: 'spki', format: 'der' })
        .toString('base64'),
    ).toBe(pair.publicKey);
  });
});

describe('importDkimPrivateKey', () => {
  it('accepts PKCS#1 and PKCS#8 RSA keys and stores PKCS#8', () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    for (const type of ['pkcs1', 'pkcs8'] as const) {
      const imported = importDkimPrivateKey(privateKey.export({ type, format: 'pem' }).toString());
      expect(imported.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    }
  });

  it.each([
    ['garbage', 'not a key', 'not a PEM private key'],
    [
      'an EC key',
      generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
      'must be an RSA key',
    ],
    [
      'a 512-bit key',
      generateKeyPairSync('rsa', { modulusLength: 512 })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
      '1024 to 4096 bits',
    ],
  ])('refuses %s', (_name, pem, message) => {
    expect(() => importDkimPrivateKey(pem)).toThrow(InvalidDkimKeyError);
    expect(() => importDkimPrivateKey(pem)).toThrow(message);
  });
});
