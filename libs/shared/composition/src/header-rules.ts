import type { AttachmentBody } from '@envoi/contracts-messages';

import { decodeEncodedWords } from './encoded-words';

/** A send request breaks a content rule (spec 4.2): a 400 whose message names the problem. */
export class ContentRuleError extends Error {
  override readonly name = 'ContentRuleError';
}

/**
 * Trace and authentication headers: the mail servers on the way write them, and recipients'
 * filters trust them, so a customer must not forge one. Any `ARC-*` name is one too.
 */
const TRACE_HEADERS: ReadonlySet<string> = new Set([
  'received',
  'return-path',
  'received-spf',
  'authentication-results',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
]);

/**
 * Headers Envoi writes itself (or that only MTAs and signers write): a custom header with one of
 * these names, or any `ARC-*` name ({@link isReservedHeader}), is rejected with a 400 (the
 * reliability plan, item 13). `message-id` is not here: it is ignored (spec 4.2 rule 5), and
 * `reply-to` is allowed when `reply_to` is absent (rule 4).
 */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'from',
  'sender',
  'to',
  'cc',
  'bcc',
  'date',
  'subject',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'content-id',
  'dkim-signature',
  ...TRACE_HEADERS,
]);

/** Whether a custom header of this name (any case) is refused: see {@link RESERVED_HEADERS}. */
export function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_HEADERS.has(lower) || isTraceHeader(lower);
}

export function isTraceHeader(lower: string): boolean {
  return TRACE_HEADERS.has(lower) || lower.startsWith('arc-');
}

/** Whether an attachment of this type goes unencoded, as given in CRLF form (RFC 2046 5.2.1). */
export function isMessageType(contentType: string): boolean {
  return /^message\//i.test(contentType);
}

/** CR, LF or NUL: never in a header. */
export const CR_LF_NUL = /[\r\n\0]/;

/**
 * The Content-ID of an inline attachment without its brackets, or undefined for a normal
 * attachment: spec 2.1 makes a `content_id` wrapped in angle brackets (`<name@host>`) inline.
 */
export function inlineContentId(contentId: string | undefined): string | undefined {
  return contentId?.startsWith('<') && contentId.endsWith('>') ? contentId.slice(1, -1) : undefined;
}

/** The bytes of an attachment's data: base64 (whitespace ignored) or UTF-8 text. */
export function attachmentBytes(attachment: AttachmentBody): Buffer {
  return attachment.base64
    ? Buffer.from(attachment.data.replace(/\s+/g, ''), 'base64')
    : Buffer.from(attachment.data, 'utf8');
}

/**
 * Why a value cannot go into a header (subject, display name, address, header value, file
 * name), or undefined when it can: no CR, LF or NUL, not even behind an RFC 2047 encoded word.
 * Other characters (U+2028 included) are safe: Nodemailer writes non-ASCII as encoded words.
 */
export function unsafeHeaderText(value: string): string | undefined {
  if (CR_LF_NUL.test(value)) return 'must not contain CR, LF or NUL';
  if (value.includes('=?') && CR_LF_NUL.test(decodeEncodedWords(value))) {
    return 'contains an encoded word that decodes to CR, LF or NUL';
  }
  return undefined;
}
