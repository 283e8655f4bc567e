import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Tokens in open-pixel and click URLs (reliability plan items 27 and 30). The token names the
 * message and, for a click, the index of the link recorded at send time; the redirect target is
 * looked up from that record, never read from the URL. The 128-bit MAC makes tokens unguessable
 * and unforgeable even though message ids are time-ordered.
 *
 * Layout, base64url without padding (47 characters):
 *   [16 bytes message uuid][1 byte kind][2 bytes link index, big-endian][16 bytes MAC]
 * where MAC = first 16 bytes of HMAC-SHA256(secret, DOMAIN ‖ first 19 bytes).
 */

export type TrackingKind = 'open' | 'click';

const DOMAIN = Buffer.from('envoi-tracking-v1', 'ascii');
const MIN_SECRET_BYTES = 32;
const MAX_INDEX = 0xffff;
const PAYLOAD_BYTES = 19;
const MAC_BYTES = 16;
const TOKEN_BYTES = PAYLOAD_BYTES + MAC_BYTES;
/** base64url length of TOKEN_BYTES without padding. */
const TOKEN_CHARS = Math.ceil((TOKEN_BYTES * 8) / 6);
const MAX_TOKEN_CHARS = 128;

const KIND_BYTES: Readonly<Record<TrackingKind, number>> = { open: 1, click: 2 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Opaque URL-safe token: message id (uuid), kind, link index; authenticated with HMAC-SHA256 (first 16 bytes) under `secret` (a Buffer of ≥32 bytes). */
export function trackingToken(
  secret: Buffer,
  messageId: string,
  kind: TrackingKind,
  index: number,
): string {
  if (!isUsableSecret(secret)) {
    throw new RangeError(`trackingToken: the secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
  if (!UUID.test(messageId)) throw new TypeError('trackingToken: messageId is not a uuid');
  if (!Object.hasOwn(KIND_BYTES, kind)) throw new TypeError(`trackingToken: unknown kind`);
  if (!Number.isInteger(index) || index < 0 || index > MAX_INDEX) {
    throw new RangeError(`trackingToken: index must be an integer in 0..${MAX_INDEX}`);
  }
  const token = Buffer.alloc(TOKEN_BYTES);
  token.write(messageId.replace(/-/g, ''), 0, 16, 'hex');
  token[16] = KIND_BYTES[kind];
  token.writeUInt16BE(index, 17);
  mac(secret, token.subarray(0, PAYLOAD_BYTES)).copy(token, PAYLOAD_BYTES);
  return token.toString('base64url');
}

/** The token's content when its MAC verifies (timingSafeEqual) and it is well-formed; null otherwise (never throws on any input, including huge strings — reject anything longer than 128 chars first). */
export function readTrackingToken(
  secret: Buffer,
  token: string,
): { messageId: string; kind: TrackingKind; index: number } | null {
  try {
    if (typeof token !== 'string' || token.length > MAX_TOKEN_CHARS) return null;
    if (token.length !== TOKEN_CHARS || !BASE64URL.test(token) || !isUsableSecret(secret)) {
      return null;
    }
    const bytes = Buffer.from(token, 'base64url');
    // Only the canonical spelling: the last character's two spare bits must be zero, or several
    // strings would carry the same token.
    if (bytes.length !== TOKEN_BYTES || bytes.toString('base64url') !== token) return null;
    const payload = bytes.subarray(0, PAYLOAD_BYTES);
    if (!timingSafeEqual(mac(secret, payload), bytes.subarray(PAYLOAD_BYTES))) return null;

    const kindByte = bytes[16];
    const kind: TrackingKind | null =
      kindByte === KIND_BYTES.open ? 'open' : kindByte === KIND_BYTES.click ? 'click' : null;
    if (kind === null) return null;
    const hex = bytes.toString('hex', 0, 16);
    const messageId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return { messageId, kind, index: bytes.readUInt16BE(17) };
  } catch {
    return null;
  }
}

function isUsableSecret(secret: unknown): secret is Buffer {
  return Buffer.isBuffer(secret) && secret.length >= MIN_SECRET_BYTES;
}

function mac(secret: Buffer, payload: Buffer): Buffer {
  return createHmac('sha256', secret)
    .update(DOMAIN)
    .update(payload)
    .digest()
    .subarray(0, MAC_BYTES);
}
