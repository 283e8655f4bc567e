import { createHash } from 'node:crypto';

export const API_KEY_PATTERN = /^envoi-sk-[A-Za-z0-9]{64}$/;

/** The accounts service stores and looks keys up by this hash; the secret never leaves the edge. */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** The token of `Authorization: Bearer <token>`, or null when the header is missing or malformed. */
export function bearerToken(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  // The scheme is case-insensitive (RFC 7235); exactly one token follows it.
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return match ? match[1] : null;
}
