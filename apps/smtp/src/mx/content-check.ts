import {
  checkInboundMessage,
  DEFAULT_INBOUND_LIMITS,
  type InboundHeadline,
  type InboundLimits,
  InboundMessageRejected,
} from '@envoi/shared-inbound-mail';

import { SmtpReply } from '../submission/replies';

/** The parse bounds of the MX: the library's, with the MX's own size limit. */
export function mxContentLimits(maxMessageBytes: number): InboundLimits {
  return { ...DEFAULT_INBOUND_LIMITS, maxMessageBytes };
}

export type ContentCheck = { headline: InboundHeadline } | { refusal: SmtpReply };

/**
 * Checks a received message within `limits` before it is spooled (reliability plan item 43),
 * without decoding its bodies (the routes service parses it): a MIME bomb (deep nesting, too many
 * parts or header fields, too much decoded content) gets the library's `552 5.3.4` / `554 5.6.0`
 * refusal.
 */
export async function checkContent(raw: Buffer, limits: InboundLimits): Promise<ContentCheck> {
  try {
    return { headline: await checkInboundMessage(raw, limits) };
  } catch (error) {
    if (!(error instanceof InboundMessageRejected)) throw error;
    const reply = error.smtpReply;
    return { refusal: new SmtpReply(reply.code, reply.enhancedCode, reply.text) };
  }
}
