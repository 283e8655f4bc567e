const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The local part prefix of every envelope sender the delivery service uses:
 * `bounce+<message uuid>@<host>` (VERP), so that an asynchronous bounce names its message.
 */
export const VERP_PREFIX = 'bounce+';

export function isMessageUuid(value: string): boolean {
  return UUID.test(value);
}

/** The message uuid a bounce address carries, or null when it is not one of ours. */
export function messageIdOfBounceAddress(address: string): string | null {
  const at = address.lastIndexOf('@');
  if (at < 0) return null;
  const local = address.slice(0, at).toLowerCase();
  if (!local.startsWith(VERP_PREFIX)) return null;
  const id = local.slice(VERP_PREFIX.length);
  return isMessageUuid(id) ? id : null;
}
