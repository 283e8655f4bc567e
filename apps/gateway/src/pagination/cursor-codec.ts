import { createHmac, timingSafeEqual } from 'node:crypto';

interface CursorPayload {
  /** Account the cursor was issued to. */
  a: string;
  /** The list it belongs to. */
  r: string;
  /** The service's position. */
  p: string;
}

/**
 * Opaque public cursors: the service's position, bound to the account and the list, signed so a
 * forged, altered or foreign cursor is rejected instead of reaching a service.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(accountId: string, list: string, position: string): string {
    const body = Buffer.from(
      JSON.stringify({ a: accountId, r: list, p: position } satisfies CursorPayload),
    ).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The position, or null when the cursor is malformed, tampered with, or not this caller's. */
  decode(cursor: string, accountId: string, list: string): string | null {
    const [body, signature, extra] = cursor.split('.');
    if (!body || !signature || extra !== undefined) return null;
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    const { a, r, p } = (payload ?? {}) as Partial<CursorPayload>;
    if (a !== accountId || r !== list || typeof p !== 'string') return null;
    return p;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}
