import { randomBytes } from 'node:crypto';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Random bytes drawn at once: a draw costs far more than its bytes (as node's randomUUID pools). */
const RANDOM_POOL_BYTES = 4096;
let randomPool = Buffer.alloc(0);
let randomPoolUsed = 0;

/** `length` random bytes, each handed out once, from a pool drawn ahead. */
function randomSlice(length: number): Buffer {
  if (length > RANDOM_POOL_BYTES) return randomBytes(length);
  if (randomPoolUsed + length > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomPoolUsed = 0;
  }
  randomPoolUsed += length;
  return randomPool.subarray(randomPoolUsed - length, randomPoolUsed);
}

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, the version, 12 random bits, the variant and
 * 62 random bits. Time-ordered, so ids sort (and index) by creation.
 */
export function uuidv7(nowMs: number = Date.now(), random: Buffer = randomSlice(10)): string {
  if (!Number.isInteger(nowMs) || nowMs < 0 || nowMs > 0xffff_ffff_ffff) {
    throw new RangeError(`uuidv7: timestamp out of range: ${nowMs}`);
  }
  if (random.length < 10) throw new RangeError('uuidv7: needs 10 random bytes');
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(nowMs, 0, 6);
  random.copy(bytes, 6, 0, 10);
  bytes[6] = 0x70 | ((bytes[6] ?? 0) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** `count` UUIDv7s of the same millisecond, their random bits drawn together. */
export function uuidv7s(count: number, nowMs: number = Date.now()): string[] {
  const random = randomSlice(10 * count);
  return Array.from({ length: count }, (_, index) =>
    uuidv7(nowMs, random.subarray(10 * index, 10 * index + 10)),
  );
}

/** The Message-ID header of a message: `<id@domain>` (platform notes 2.3). */
export function messageIdHeader(id: string, domain: string): string {
  return `<${id}@${domain}>`;
}

/**
 * A Message-ID header as the messages list's filter compares it: trimmed, lowercase, in angle
 * brackets whether or not it was given with them.
 */
export function messageIdHeaderKey(value: string): string {
  return `<${value.trim().replace(/^<|>$/g, '').toLowerCase()}>`;
}

export interface ParsedMessageRef {
  /** The message's uuid, lowercase. */
  id: string;
  /** The domain part of `<uuid@domain>`, lowercase; absent for a bare uuid. */
  domain?: string;
}

/**
 * Reads the two accepted forms of a message id: `<uuid@domain>` and the bare uuid (the brackets
 * are optional). Null for anything else.
 */
export function parseMessageRef(raw: string): ParsedMessageRef | null {
  const value = raw.trim().toLowerCase();
  if (UUID.test(value)) return { id: value };
  const match = /^<?([0-9a-f-]{36})@([a-z0-9.-]{1,253})>?$/.exec(value);
  if (!match?.[1] || !match[2] || !UUID.test(match[1])) return null;
  return { id: match[1], domain: match[2] };
}
