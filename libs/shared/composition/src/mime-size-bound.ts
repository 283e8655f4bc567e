import type { AttachmentBody } from '@envoi/contracts-messages';

import { isMessageType } from './header-rules';
import { assertSafe, type ComposeAddress, type ComposeInput } from './mime';

/**
 * The longest header-bound value (a subject, a name, an address, a custom header's name or value,
 * an attachment's file name or type) for which composing cannot fail: even unfolded and encoded
 * at {@link ENCODED_BYTES_PER_BYTE}, `Name: value` (or `"name" <address>`) stays far under the
 * 998 octets of a line (RFC 5322 2.1.1).
 */
const SAFE_HEADER_VALUE_BYTES = 150;
/**
 * Bytes one byte of a header value or text part can take once composed, at most: quoted-printable
 * writes `=XX` with a soft line break every 76 characters (≤ 3.2), an RFC 2047 encoded word adds
 * its frame and folding (≤ 4.2), base64 1.4, a 7bit part's lone LF becomes CRLF (2).
 */
const ENCODED_BYTES_PER_BYTE = 5;
/** What the message's own headers (Message-ID, Date, MIME-Version, …) and framing can take. */
const MESSAGE_OVERHEAD_BYTES = 4096;
/** What a part's headers and boundary lines can take. */
const PART_OVERHEAD_BYTES = 1024;

function utf8Bytes(value: string | undefined): number {
  return value === undefined ? 0 : Buffer.byteLength(value, 'utf8');
}

/** At least the attachment's bytes, without decoding them. */
function attachmentBytesBound(attachment: AttachmentBody): number {
  return attachment.base64 ? Math.ceil(attachment.data.length / 4) * 3 : utf8Bytes(attachment.data);
}

/** Base64 with a CRLF every 76 characters. */
function base64Bytes(bytes: number): number {
  const encoded = Math.ceil(bytes / 3) * 4;
  return encoded + 2 * Math.ceil(encoded / 76);
}

function headerValues(input: ComposeInput): Array<string | undefined> {
  const addresses: ComposeAddress[] = [
    input.from,
    ...input.to,
    ...(input.cc ?? []),
    ...(input.replyTo ? [input.replyTo] : []),
  ];
  return [
    input.subject,
    ...addresses.flatMap(({ email, name }) => [email, name]),
    ...Object.entries(input.headers).flat(),
    ...input.attachments.flatMap((attachment) => [
      attachment.file_name,
      attachment.content_type,
      attachment.content_id,
      attachment.content_disposition,
    ]),
  ];
}

/**
 * An upper bound of the size of `composeMime(input)`, without composing, when the input shows
 * that composing cannot fail: header values short enough that no header line can exceed 998
 * octets, and no message/* attachment (written as is). Text parts cannot have long lines: Nodemailer
 * writes a part with lines over 76 characters quoted-printable or base64. Undefined when that
 * is not shown (compose to know). Checks the header-bound values as composeMime does first
 * (the same ContentRuleError).
 */
export function composedSizeUpperBound(input: ComposeInput): number | undefined {
  assertSafe(input);
  let headerBytes = 0;
  for (const value of headerValues(input)) {
    const bytes = utf8Bytes(value);
    if (bytes > SAFE_HEADER_VALUE_BYTES) return undefined;
    headerBytes += bytes;
  }
  if (input.attachments.some((attachment) => isMessageType(attachment.content_type))) {
    return undefined;
  }
  let bound = MESSAGE_OVERHEAD_BYTES + ENCODED_BYTES_PER_BYTE * headerBytes;
  for (const part of [input.text, input.html, input.amp]) {
    if (part) bound += PART_OVERHEAD_BYTES + ENCODED_BYTES_PER_BYTE * utf8Bytes(part);
  }
  for (const attachment of input.attachments) {
    const bytes = attachmentBytesBound(attachment);
    // Nodemailer may write a text/* attachment quoted-printable, any other one base64.
    bound +=
      PART_OVERHEAD_BYTES +
      (/^text\//i.test(attachment.content_type)
        ? ENCODED_BYTES_PER_BYTE * bytes
        : base64Bytes(bytes));
  }
  return bound;
}
