import { isMessageUuid, VERP_PREFIX } from '@envoi/contracts-routes';

export { messageIdOfBounceAddress, VERP_PREFIX } from '@envoi/contracts-routes';

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
  if (!isMessageUuid(id)) throw new Error(`not a message uuid: ${messageId}`);
  const host = (returnPathHost ?? platformHost).trim().toLowerCase().replace(/\.$/, '');
  return `${VERP_PREFIX}${id}@${host}`;
}
