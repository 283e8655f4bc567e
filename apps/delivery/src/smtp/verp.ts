const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The local part prefix of every envelope sender: `bounce+<message uuid>@<host>`. */
export const VERP_PREFIX = 'bounce+';

/**
 * The envelope sender (MAIL FROM) of one message: a bounce address unique to it (VERP), so that
 * an asynchronous bounce names the message it is about. On the domain's own return-path host
 * once that host's CNAME is verified (SPF and DMARC alignment on the sender's domain), otherwise
 * on the platform's bounce host (`RETURN_PATH_TARGET`), where the same bounces arrive: the
 * sender's own domain is never used, since its MX would receive (and could not match) them.
 */
export function bounceAddress(
  messageId: string,
  returnPathHost: string | null,
  platformHost: string,
): string {
  const id = messageId.toLowerCase();
  if (!UUID.test(id)) throw new Error(`not a message uuid: ${messageId}`);
  const host = (returnPathHost ?? platformHost).trim().toLowerCase().replace(/\.$/, '');
  return `${VERP_PREFIX}${id}@${host}`;
}

/** The message uuid a bounce address carries, or null when it is not one of ours. */
export function messageIdOfBounceAddress(address: string): string | null {
  const at = address.lastIndexOf('@');
  if (at < 0) return null;
  const local = address.slice(0, at).toLowerCase();
  if (!local.startsWith(VERP_PREFIX)) return null;
  const id = local.slice(VERP_PREFIX.length);
  return UUID.test(id) ? id : null;
}
