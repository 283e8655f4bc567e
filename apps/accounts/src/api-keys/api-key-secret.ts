import { createHash, randomBytes } from 'node:crypto';

export const SECRET_KEY_PREFIX = 'envoi-sk-';
export const PUBLIC_KEY_PREFIX = 'envoi-pk-';
/** Random characters after the prefix (spec 2.3: `<prefix>-sk-<64 random characters>`). */
export const SECRET_RANDOM_LENGTH = 64;
/** Leading random characters of the secret repeated in the public key. */
export const PUBLIC_KEY_RANDOM_LENGTH = 12;

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export type RandomBytes = (size: number) => Buffer;

/**
 * `length` characters drawn uniformly from [A-Za-z0-9] with a CSPRNG. Rejection sampling keeps
 * the distribution uniform: a byte maps to `byte % 62` only when it is below 248.
 */
export function randomAlphanumeric(length: number, random: RandomBytes = randomBytes): string {
  return randomFromAlphabet(length, ALPHABET, random);
}

/**
 * `length` characters drawn uniformly from `alphabet` (at most 256 characters) with a CSPRNG,
 * by rejection sampling: bytes at or above the largest multiple of its size are redrawn.
 */
export function randomFromAlphabet(
  length: number,
  alphabet: string,
  random: RandomBytes = randomBytes,
): string {
  const unbiasedLimit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of random(length - out.length + 8)) {
      if (byte >= unbiasedLimit) continue;
      out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Lowercase hex SHA-256 of the whole presented key: the only form the database holds. */
export function hashSecretKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

export interface GeneratedApiKey {
  /** Shown once, in the create response; never stored. */
  secretKey: string;
  secretHash: string;
  /**
   * `envoi-pk-` + the first 12 random characters of the secret: enough to recognise a key (in a
   * list, or a leaked secret) without revealing it; the 52 other characters (≈309 bits) stay secret.
   */
  publicKey: string;
}

export function generateApiKey(random: RandomBytes = randomBytes): GeneratedApiKey {
  const body = randomAlphanumeric(SECRET_RANDOM_LENGTH, random);
  const secretKey = `${SECRET_KEY_PREFIX}${body}`;
  return {
    secretKey,
    secretHash: hashSecretKey(secretKey),
    publicKey: `${PUBLIC_KEY_PREFIX}${body.slice(0, PUBLIC_KEY_RANDOM_LENGTH)}`,
  };
}
