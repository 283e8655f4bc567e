/** One mailbox of an address header; `name` is `""` when the header gives none. */
export interface MailboxAddress {
  name: string;
  address: string;
}

/** One header field of the top-level header block, unfolded, value as sent. */
export interface HeaderField {
  name: string;
  value: string;
}

/** One attachment or inline part, decoded. */
export interface ParsedAttachment {
  filename: string;
  contentType: string;
  /** The Content-ID header as sent (`<…>` included), or `""`. */
  contentId: string;
  /** The Content-Disposition type without its parameters, or `""`. */
  disposition: string;
  content: Buffer;
}

/** A received message, read within bounds; everything a route payload is built from. */
export interface ParsedInboundMessage {
  /** Header fields of the top-level header block, in order. */
  headers: HeaderField[];
  from: MailboxAddress[];
  replyTo: MailboxAddress[];
  to: MailboxAddress[];
  cc: MailboxAddress[];
  /** Decoded (RFC 2047) subject. */
  subject: string;
  /** `""` when the message has no HTML part. */
  html: string;
  /** The text parts, or a text rendering of the HTML when there is none. */
  text: string;
  /** Lowercased media type of the top-level entity (`multipart/report`, `text/plain`, …). */
  contentType: string;
  /** Lowercased media types of the leaf entities, in order. */
  leafContentTypes: string[];
  attachments: ParsedAttachment[];
}

/** The unfolded value of the first header field called `name` (any case), or `""`. */
export function headerValue(message: Pick<ParsedInboundMessage, 'headers'>, name: string): string {
  const wanted = name.toLowerCase();
  return message.headers.find((field) => field.name.toLowerCase() === wanted)?.value ?? '';
}
