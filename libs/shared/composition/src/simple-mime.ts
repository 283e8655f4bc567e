import { domainToASCII } from 'node:url';

import {
  buildHeaderValue,
  foldLines,
  hasLongerLines,
  isPlainText,
} from 'nodemailer/lib/mime-funcs';

import { hasOverlongTextLine, MAX_LINE_OCTETS } from './line-length';
import type { ComposeAddress, ComposeInput } from './mime';
import { encodedText, withFinalLineBreak } from './mime-tree';

const CRLF = '\r\n';
/** Nodemailer's fold width for header lines. */
const FOLD_WIDTH = 76;
/** Nodemailer's boundary of the root node (node 1): its prefix, the shared part, the node. */
const ROOT_BOUNDARY = (baseBoundary: string) => `--_NmP-${baseBoundary}-Part_1`;
/**
 * An address Nodemailer may write as given: a dot-atom local part and an ASCII host name (see
 * {@link isSimpleAddress}).
 */
const PLAIN_EMAIL = /^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@([a-z0-9.-]+)$/;
/** A display name Nodemailer writes as given (neither quoted nor encoded). */
const PLAIN_NAME = /^[\w ]*$/;
/** A subject Nodemailer writes as given: printable ASCII, no quote, nothing like an encoded word. */
const PLAIN_SUBJECT = /^(?!.*=\?)[\x20\x21\x23-\x7e]*$/;

/**
 * The common messages written directly, without Nodemailer's MimeNode tree (built, then asked
 * for each header): one To address, text and/or HTML, no AMP part, attachment, Cc, Reply-To or
 * custom header, addresses, names and subject that Nodemailer writes unchanged. Null for any
 * other message (composed with the tree). Byte for byte what {@link buildMimeTree} writes for
 * the same input (simple-mime.spec.ts proves it on a corpus): the same header fields in Nodemailer's
 * order, folded by its own foldLines, its choice of transfer encoding, the same encoders.
 * `baseBoundary`: the shared part of the multipart boundaries.
 */
export function simpleMime(input: ComposeInput, baseBoundary: string): Buffer | null {
  const parts = textParts(input);
  const [to] = input.to;
  if (!parts || input.to.length !== 1 || !to || !isSimpleAddress(input.from)) return null;
  const subject = headerLine('Subject', input.subject);
  if (!isSimpleAddress(to) || !isSimpleSubject(input.subject, subject)) return null;

  const addressed = [
    headerLine('From', addressValue(input.from)),
    headerLine('To', addressValue(to)),
    subject,
    headerLine('Message-ID', input.messageId),
    headerLine('Date', input.date.toUTCString().replace(/GMT/, '+0000')),
  ];
  const [only] = parts;
  if (parts.length === 1 && only) {
    // The part is the root: its encoding is set before MIME-Version, its type moved last.
    const encoding = transferEncoding(only.content);
    return withFinalLineBreak([
      headerBlock([
        ...addressed,
        headerLine('Content-Transfer-Encoding', encoding),
        headerLine('MIME-Version', '1.0'),
        headerLine('Content-Type', only.contentType),
      ]),
      encodedText(only.content, encoding),
    ]);
  }
  const boundary = ROOT_BOUNDARY(baseBoundary);
  const contentType = buildHeaderValue({ value: 'multipart/alternative', params: { boundary } });
  const chunks = [
    headerBlock([
      ...addressed,
      headerLine('MIME-Version', '1.0'),
      headerLine('Content-Type', contentType),
    ]),
  ];
  parts.forEach((part, index) => {
    const encoding = transferEncoding(part.content);
    chunks.push(
      Buffer.from(`${index > 0 ? CRLF : ''}--${boundary}${CRLF}`),
      headerBlock([
        headerLine('Content-Type', part.contentType),
        headerLine('Content-Transfer-Encoding', encoding),
      ]),
      encodedText(part.content, encoding),
    );
  });
  chunks.push(Buffer.from(`${CRLF}--${boundary}--${CRLF}`));
  return withFinalLineBreak(chunks);
}

interface TextPart {
  contentType: string;
  content: string;
}

/** The message's text and HTML parts (CRLF line breaks), or null for another shape. */
function textParts(input: ComposeInput): TextPart[] | null {
  if (input.attachments.length > 0 || input.amp || input.cc?.length || input.replyTo) return null;
  if (Object.keys(input.headers).length > 0) return null;
  const parts: TextPart[] = [];
  if (input.text)
    parts.push({ contentType: 'text/plain; charset=utf-8', content: crlf(input.text) });
  if (input.html)
    parts.push({ contentType: 'text/html; charset=utf-8', content: crlf(input.html) });
  return parts.length > 0 ? parts : null;
}

function crlf(content: string): string {
  return content.replace(/\r\n|\r|\n/g, '\r\n');
}

/** An address and name Nodemailer writes as given (its host name is its own ASCII form). */
function isSimpleAddress({ email, name }: ComposeAddress): boolean {
  const host = PLAIN_EMAIL.exec(email)?.[1];
  return host !== undefined && isAsciiHost(host) && (name === undefined || PLAIN_NAME.test(name));
}

/** Host names that are their own ASCII form, as last seen (a send's hosts repeat). */
const asciiHosts = new Set<string>();
const ASCII_HOSTS_MAX = 1_000;

/** Whether Nodemailer's punycode step (domainToASCII) gives the host name back unchanged. */
function isAsciiHost(host: string): boolean {
  if (asciiHosts.has(host)) return true;
  if (domainToASCII(host) !== host) return false;
  if (asciiHosts.size >= ASCII_HOSTS_MAX) asciiHosts.clear();
  asciiHosts.add(host);
  return true;
}

/** A subject written as given, folded (`line`) at its spaces into lines within the limit. */
function isSimpleSubject(subject: string, line: string): boolean {
  return (
    subject.trim() !== '' &&
    PLAIN_SUBJECT.test(subject) &&
    // ASCII: a character is an octet.
    (line.length <= MAX_LINE_OCTETS || !hasOverlongTextLine(line))
  );
}

function addressValue({ email, name }: ComposeAddress): string {
  return name ? `${name} <${email}>` : email;
}

function headerLine(key: string, value: string): string {
  return foldLines(`${key}: ${value}`, FOLD_WIDTH);
}

function headerBlock(lines: readonly string[]): Buffer {
  return Buffer.from(lines.join(CRLF) + CRLF + CRLF);
}

/** Nodemailer's transfer encoding of a text part (MimeNode.getTransferEncoding). */
function transferEncoding(content: string): string {
  if (isPlainText(content) && !hasLongerLines(content, FOLD_WIDTH)) return '7bit';
  return mostlyLatin(content) ? 'quoted-printable' : 'base64';
}

/** Nodemailer's choice of Q over B (MimeNode._getTextEncoding): more letters than other text. */
function mostlyLatin(value: string): boolean {
  let other = 0;
  let latin = 0;
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index);
    if (code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f)) other++;
    else if (code >= 0x80) other++;
    else if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++;
  }
  return other < latin;
}
