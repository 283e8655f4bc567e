import { createHash } from 'node:crypto';

import {
  generateApiKey,
  hashSecretKey,
  PUBLIC_KEY_PREFIX,
  randomAlphanumeric,
  SECRET_KEY_PREFIX,
} from './api-key-secret';

/** A byte source that replays a fixed sequence, repeating it as needed. */
function replay(bytes: number[]): (size: number) => Buffer {
  let index = 0;
  return (size) =>
    Buffer.from(Array.from({ length: size }, () => bytes[index++ % bytes.length] ?? 0));
}

describe('generateApiKey', () => {
  it('builds envoi-sk- plus 64 characters from [A-Za-z0-9]', () => {
    for (let i = 0; i < 200; i++) {
      expect(generateApiKey().secretKey).toMatch(/^envoi-sk-[A-Za-z0-9]{64}$/);
    }
  });

  it('hashes the whole secret with SHA-256, in lowercase hex', () => {
    const key = generateApiKey();

    expect(key.secretHash).toBe(createHash('sha256').update(key.secretKey).digest('hex'));
    expect(key.secretHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('derives the public key from the first 12 random characters only', () => {
    const key = generateApiKey();
    const random = key.secretKey.slice(SECRET_KEY_PREFIX.length);

    expect(key.publicKey).toBe(`${PUBLIC_KEY_PREFIX}${random.slice(0, 12)}`);
    expect(key.publicKey).not.toContain(random.slice(12));
  });

  it('never repeats a secret', () => {
    const secrets = new Set(Array.from({ length: 1000 }, () => generateApiKey().secretKey));

    expect(secrets.size).toBe(1000);
  });
});

describe('randomAlphanumeric', () => {
  it('maps bytes below 248 onto the alphabet modulo 62', () => {
    expect(randomAlphanumeric(4, replay([0, 61, 62, 247]))).toBe('A9A9');
  });

  it('redraws bytes of 248 and above, which would bias the first characters', () => {
    expect(randomAlphanumeric(3, replay([248, 255, 1, 250, 2, 3]))).toBe('BCD');
  });

  it('keeps drawing until the length is reached', () => {
    const value = randomAlphanumeric(64, replay([255, 255, 255, 7]));

    expect(value).toBe('H'.repeat(64));
  });

  it('spreads characters evenly over the alphabet', () => {
    const counts = new Map<string, number>();
    const sample = randomAlphanumeric(62 * 2000);
    for (const char of sample) counts.set(char, (counts.get(char) ?? 0) + 1);

    expect(counts.size).toBe(62);
    // Each character is expected 2000 times (σ ≈ 44); ±400 is far beyond chance.
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(1600);
      expect(count).toBeLessThan(2400);
    }
  });
});

describe('hashSecretKey', () => {
  it('matches a known SHA-256 vector', () => {
    expect(hashSecretKey('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });
});
