import { isHostname } from '@envoi/contracts-core';
import { messageIdOfBounceAddress } from '@envoi/contracts-routes';

/** The platform's own inbound addresses (settings of the smtp app). */
export interface PlatformMailboxes {
  /** Where VERP bounces arrive: `bounce+<message uuid>@<bounceDomain>`. */
  bounceDomain: string;
  /** Where ARF feedback reports (complaints) arrive. */
  feedbackAddress: string;
}

/** What an RCPT address is, before any routing question is asked. */
export type RecipientClass =
  | { kind: 'bounce'; address: string; messageUuid: string }
  | { kind: 'feedback'; address: string }
  /** A VERP bounce address on another host: taken when it is a domain's return-path host. */
  | { kind: 'verp'; address: string; messageUuid: string; host: string }
  /** A plain address on another domain: the routes service says whether it is taken. */
  | { kind: 'candidate'; address: string }
  /** Never accepted here: relaying denied (`%`-hacks, source routes, quoted `@`, …). */
  | { kind: 'refused' };

/**
 * Characters that never appear in a local part the MX takes: `%` and `!` (relay hacks), `@` (a
 * quoted `@`), quotes, backslashes, `:` and `,` (source routes), spaces and angle brackets.
 */
const UNSAFE_LOCAL_PART = /[%!@"\\:,;\s<>()[\]]/;

/**
 * Classifies an RCPT TO address (reliability plan 41-42): anything but a plain `local@host`
 * is refused before any routing question, the platform's bounce domain takes only VERP bounce
 * addresses, and the feedback address is matched whole.
 */
export function classifyRecipient(
  rawAddress: string,
  mailboxes: PlatformMailboxes,
): RecipientClass {
  const address = rawAddress.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at <= 0 || address.length > 320) return { kind: 'refused' };
  const local = address.slice(0, at);
  const host = address.slice(at + 1).replace(/\.$/, '');
  if (local.length > 64 || UNSAFE_LOCAL_PART.test(local) || !isHostname(host)) {
    return { kind: 'refused' };
  }
  const normalized = `${local}@${host}`;
  if (normalized === mailboxes.feedbackAddress.toLowerCase()) {
    return { kind: 'feedback', address: normalized };
  }
  if (host === mailboxes.bounceDomain.toLowerCase()) {
    const messageUuid = messageIdOfBounceAddress(normalized);
    return messageUuid ? { kind: 'bounce', address: normalized, messageUuid } : { kind: 'refused' };
  }
  const messageUuid = messageIdOfBounceAddress(normalized);
  if (messageUuid) return { kind: 'verp', address: normalized, messageUuid, host };
  return { kind: 'candidate', address: normalized };
}
