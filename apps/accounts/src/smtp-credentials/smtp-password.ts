import { randomBytes, scrypt, type ScryptOptions, timingSafeEqual } from 'node:crypto';

import { type RandomBytes,randomFromAlphabet } from '../api-keys/api-key-secret';

export const SMTP_USERNAME_PREFIX = 'envoi-smtp-';
/** Random characters after the username prefix: lowercase letters and digits (≈103 bits). */
export const SMTP_USERNAME_RANDOM_LENGTH = 20;
export const SMTP_PASSWORD_LENGTH = 40;

const USERNAME_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `envoi-smtp-` + 20 random lowercase letters and digits: easy to type, unique by chance. */
export function generateSmtpUsername(random: RandomBytes = randomBytes): string {
  return `${SMTP_USERNAME_PREFIX}${randomFromAlphabet(SMTP_USERNAME_RANDOM_LENGTH, USERNAME_ALPHABET, random)}`;
}

/** 40 random letters and digits (≈238 bits), shown once. */
export function generateSmtpPassword(random: RandomBytes = randomBytes): string {
  return randomFromAlphabet(SMTP_PASSWORD_LENGTH, PASSWORD_ALPHABET, random);
}

/** scrypt parameters of new hashes; each stored hash carries its own, so they can change. */
export interface ScryptParameters {
  cost: number;
  blockSize: number;
  parallelization: number;
}

export const DEFAULT_SCRYPT: ScryptParameters = { cost: 16_384, blockSize: 8, parallelization: 1 };

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const SCHEME = 'scrypt';

function derive(password: string, salt: Buffer, parameters: ScryptParameters): Promise<Buffer> {
  const options: ScryptOptions = {
    N: parameters.cost,
    r: parameters.blockSize,
    p: parameters.parallelization,
    maxmem: 256 * parameters.cost * parameters.blockSize,
  };
  return new Promise((resolve, reject) => {
    scrypt(password, salt, KEY_BYTES, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** `scrypt$<N>$<r>$<p>$<salt base64>$<key base64>`, with a fresh salt. */
export async function hashSmtpPassword(
  password: string,
  parameters: ScryptParameters = DEFAULT_SCRYPT,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, parameters);
  const { cost, blockSize, parallelization } = parameters;
  return [
    SCHEME,
    cost,
    blockSize,
    parallelization,
    salt.toString('base64'),
    key.toString('base64'),
  ].join('$');
}

interface StoredHash {
  parameters: ScryptParameters;
  salt: Buffer;
  key: Buffer;
}

function parseStoredHash(stored: string): StoredHash | undefined {
  const [scheme, cost, blockSize, parallelization, salt, key, ...rest] = stored.split('$');
  if (scheme !== SCHEME || rest.length > 0 || salt === undefined || key === undefined) {
    return undefined;
  }
  const parameters = {
    cost: Number(cost),
    blockSize: Number(blockSize),
    parallelization: Number(parallelization),
  };
  if (!Object.values(parameters).every((value) => Number.isSafeInteger(value) && value > 0)) {
    return undefined;
  }
  return { parameters, salt: Buffer.from(salt, 'base64'), key: Buffer.from(key, 'base64') };
}

/**
 * A stored hash no password matches (its key is all zeroes, which scrypt does not produce): an
 * unknown username is checked against it, so that it costs what a wrong password costs.
 */
export const UNMATCHABLE_SMTP_PASSWORD_HASH = [
  SCHEME,
  DEFAULT_SCRYPT.cost,
  DEFAULT_SCRYPT.blockSize,
  DEFAULT_SCRYPT.parallelization,
  Buffer.alloc(SALT_BYTES, 1).toString('base64'),
  Buffer.alloc(KEY_BYTES).toString('base64'),
].join('$');

/** Whether the password matches the stored hash (compared in constant time). */
export async function verifySmtpPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseStoredHash(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.parameters);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}
