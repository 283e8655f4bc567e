import { decodeEncodedWords } from '@envoi/shared-composition';

import { firstMailboxAddress, topHeaderFields } from './header-block';
import { type InboundLimits, InboundMessageRejected } from './inbound-limits';
import { scanMimeStructure } from './mime-structure';
import { parseInboundMessage } from './parse-inbound-message';
import { headerValue } from './parsed-inbound-message';

/** What a receiving MX says of a message before routing it: read from its header block. */
export interface InboundHeadline {
  /** The first From address, `""` when there is none. */
  from: string;
  /** Decoded (RFC 2047). */
  subject: string;
  /** The Message-ID field as sent, `""` when there is none. */
  messageId: string;
}

/**
 * Checks a received message against `limits` (items 43-44) without decoding its bodies: the size,
 * then one structural scan for nesting, parts and header fields. Base64 and quoted-printable
 * shrink and nothing is decompressed, so a message no larger than the decoded bounds cannot
 * decode past them; a larger one is parsed whole to know. The headline comes from the top-level
 * header block only. Throws {@link InboundMessageRejected}, as {@link parseInboundMessage} does.
 */
export async function checkInboundMessage(
  raw: Buffer,
  limits: InboundLimits,
): Promise<InboundHeadline> {
  if (raw.length > limits.maxMessageBytes) {
    throw new InboundMessageRejected(
      'message_too_large',
      `message larger than ${limits.maxMessageBytes} bytes`,
    );
  }
  scanMimeStructure(raw, limits);
  if (raw.length > Math.min(limits.maxDecodedBytes, limits.maxAttachmentBytes)) {
    await parseInboundMessage(raw, limits);
  }
  const header = { headers: topHeaderFields(raw) };
  return {
    from: firstMailboxAddress(headerValue(header, 'from')),
    subject: decodeEncodedWords(headerValue(header, 'subject')),
    messageId: headerValue(header, 'message-id'),
  };
}
