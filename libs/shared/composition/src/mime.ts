import { createHash } from 'node:crypto';

import type { AttachmentBody, ParsedContentRecord } from '@envoi/contracts-messages';
import { type Attachment, simpleParser } from 'mailparser';
import MailComposer, { type MailComposerAttachment } from 'nodemailer/lib/mail-composer';
import { encodeWord, foldLines } from 'nodemailer/lib/mime-funcs';
import type MimeNode from 'nodemailer/lib/mime-node';

import { decodeEncodedWords } from './encoded-words';
import {
  attachmentBytes,
  ContentRuleError,
  inlineContentId,
  isMessageType,
  isReservedHeader,
  unsafeHeaderText,
} from './header-rules';
import { hasOverlongLine, hasOverlongTextLine, MAX_LINE_OCTETS } from './line-length';
import { buildMimeTree } from './mime-tree';
import { simpleMime } from './simple-mime';

export interface ComposeAddress {
  email: string;
  name?: string;
}

export interface ComposeInput {
  /** `<uuid@domain>`, written verbatim. */
  messageId: string;
  date: Date;
  from: ComposeAddress;
  /** v2 send: exactly one; conversation: 1–50. */
  to: ComposeAddress[];
  cc?: ComposeAddress[];
  replyTo?: ComposeAddress;
  subject: string;
  text?: string;
  html?: string;
  amp?: string;
  attachments: AttachmentBody[];
  /** Custom headers already checked by checkContentRules and filtered by customHeaders. */
  headers: Record<string, string>;
}

const MESSAGE_ID = /^<[^<>\s@]+@[^<>\s@]+>$/;
const AMP_TYPE = 'text/x-amp-html';
/** Nodemailer's fold width for header lines. */
const FOLD_WIDTH = 76;
/**
 * Custom headers Nodemailer writes as addresses or message ids: an encoded word there would be
 * read literally, so one that cannot be folded is refused instead of encoded.
 */
const STRUCTURED_HEADERS: ReadonlySet<string> = new Set([
  'reply-to',
  'in-reply-to',
  'references',
  'otp-token',
]);

/**
 * Builds the RFC 5322 message (CRLF line endings) with Nodemailer's MailComposer tree, written
 * without streams ({@link buildMimeTree}), or, for the common shapes, its bytes written directly
 * ({@link simpleMime}):
 * multipart/mixed (attachments) > multipart/alternative (text, AMP, HTML, the order Gmail
 * requires) > multipart/related (HTML and its inline images), each level only when needed.
 * No Bcc and no X-Mailer header; the Message-ID is `messageId`; custom headers keep their case.
 * Header-bound values are checked again (defence in depth): a CR, LF or NUL is a
 * {@link ContentRuleError}. No line is longer than 998 octets (RFC 5322 2.1.1): Nodemailer folds
 * headers at whitespace, {@link foldable} encodes those it cannot fold, and it gives text parts
 * with long lines quoted-printable or base64; a message that still has one is a ContentRuleError.
 * Deterministic: the same input gives the same bytes (the Message-ID and Date are given, and the
 * multipart boundaries are derived from the Message-ID), so a message can be composed again from
 * what was stored at accept and read back exactly as it is sent.
 */
export function composeMime(input: ComposeInput): Promise<Buffer> {
  // Composed at once; a refused input still rejects the promise rather than throwing.
  return new Promise((resolve) => resolve(composedNow(input)));
}

function composedNow(input: ComposeInput): Buffer {
  assertSafe(input);
  // The common shapes are written directly, as the tree would write them.
  const raw = simpleMime(input, boundaryOf(input.messageId)) ?? buildMimeTree(mimeTreeOf(input));
  if (hasOverlongLine(raw)) {
    throw new ContentRuleError(
      `the message would have a line longer than ${MAX_LINE_OCTETS} octets (RFC 5322 2.1.1)`,
    );
  }
  return raw;
}

/** The message's MIME tree as {@link composeMime} writes it (a tree is built once). */
export function mimeTreeOf(input: ComposeInput): MimeNode {
  assertSafe(input);
  const headerCase = new Map<string, string>();
  for (const name of Object.keys(input.headers)) headerCase.set(name.toLowerCase(), name);
  const composer = new MailComposer({
    messageId: input.messageId,
    date: input.date,
    baseBoundary: boundaryOf(input.messageId),
    from: address(input.from),
    to: input.to.map(address),
    cc: input.cc?.length ? input.cc.map(address) : undefined,
    replyTo: input.replyTo ? address(input.replyTo) : undefined,
    subject: foldable('Subject', input.subject),
    text: body(input.text),
    amp: body(input.amp),
    html: body(input.html),
    attachments: input.attachments.map(attachment),
    // A list of pairs: an object with "key" and "value" members would be read as one header.
    headers: Object.entries(input.headers).map(([key, value]) => ({
      key,
      value: foldable(key, value),
    })),
    // Nodemailer writes header names Camel-Cased; custom headers get their own case back.
    normalizeHeaderKey: (key: string) => headerCase.get(key.toLowerCase()) ?? key,
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  return composer.compile();
}

/**
 * The shared part of the message's multipart boundaries (Nodemailer draws it at random otherwise):
 * a digest of the Message-ID, as unlikely as a random one to occur in the content.
 */
function boundaryOf(messageId: string): string {
  return createHash('sha256').update(messageId).digest('hex').slice(0, 24);
}

/**
 * A header value as Nodemailer can write it in lines of at most 998 octets: as given when
 * folding it at its whitespace (as Nodemailer does) is enough, otherwise, for an unstructured
 * value (a subject, an X- header), as RFC 2047 encoded words, which can be split anywhere and
 * decode to the same text. Nodemailer keeps valid encoded words as they are. Deterministic: the
 * same value always gives the same words.
 */
function foldable(name: string, value: string): string {
  if (!hasOverlongTextLine(foldLines(`${name}: ${value}`, FOLD_WIDTH))) return value;
  if (STRUCTURED_HEADERS.has(name.toLowerCase())) {
    throw new ContentRuleError(
      `header ${JSON.stringify(name)} has a word too long to fold into lines of at most ${MAX_LINE_OCTETS} octets (RFC 5322 2.1.1)`,
    );
  }
  // 52: the encoded-word length Nodemailer itself uses for headers.
  return encodeWord(value, 'Q', 52);
}

/**
 * The contract's `content_parsed` (platform notes 2.4) of a raw message, with mailparser:
 * parts text/plain, text/x-amp-html and text/html (in that order, when present); attachments
 * (inline ones included) base64 with `content_id` without brackets ('' when none); top-level
 * headers by name (first spelling seen), values unfolded with encoded words decoded.
 */
export async function parseMime(raw: Buffer): Promise<ParsedContentRecord> {
  const parsed = await simpleParser(raw, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
    keepCidLinks: true,
  });
  const amp = parsed.attachments.filter(isAmpPart);
  const parts: ParsedContentRecord['parts'] = [];
  // mailparser gives '' for a missing part; an empty part carries nothing either.
  if (parsed.text) parts.push({ content_type: 'text/plain', content: parsed.text });
  for (const part of amp) parts.push({ content_type: AMP_TYPE, content: decodeText(part) });
  if (parsed.html) parts.push({ content_type: 'text/html', content: parsed.html });

  const attachments = parsed.attachments
    .filter((part) => !isAmpPart(part))
    .map((part) => ({
      filename: part.filename ?? '',
      content: part.content.toString('base64'),
      content_type: part.contentType,
      content_id: part.cid ?? part.contentId?.replace(/^<|>$/g, '') ?? '',
    }));

  const headers: Record<string, string[]> = {};
  const spelling = new Map<string, string>();
  for (const { key, line } of parsed.headerLines) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = spelling.get(key) ?? line.slice(0, colon).trim();
    spelling.set(key, name);
    const value = decodeEncodedWords(
      line
        .slice(colon + 1)
        .replace(/\r?\n(?=[ \t])/g, '')
        .trim(),
    );
    (headers[name] ??= []).push(value);
  }
  return { parts, attachments, headers };
}

/**
 * A text body with CRLF line breaks only: a lone CR or LF is not allowed in SMTP DATA, and
 * Nodemailer writes 7bit parts as they are. (Normalising here is cheaper than its `newline`
 * stream transform, which rewrites the whole message.)
 */
function body(content: string | undefined): string | undefined {
  return content ? crlf(content) : undefined;
}

function crlf(content: string): string {
  return content.replace(/\r\n|\r|\n/g, '\r\n');
}

function address({ email, name }: ComposeAddress): { address: string; name: string } {
  return { address: email, name: name ?? '' };
}

function attachment(body: AttachmentBody): MailComposerAttachment {
  const cid = inlineContentId(body.content_id);
  return {
    filename: body.file_name,
    contentType: body.content_type,
    // Bytes, not text: Nodemailer base64-encodes them, so the data round-trips byte for byte.
    // A message/* part cannot be encoded (RFC 2046 5.2.1): it goes as is, in CRLF form.
    content: isMessageType(body.content_type)
      ? Buffer.from(crlf(attachmentBytes(body).toString('latin1')), 'latin1')
      : attachmentBytes(body),
    contentDisposition: body.content_disposition?.toLowerCase() ?? (cid ? 'inline' : 'attachment'),
    ...(cid ? { cid } : {}),
  };
}

/** The header-bound values checked again (defence in depth), as {@link composeMime} does first. */
export function assertSafe(input: ComposeInput): void {
  if (!MESSAGE_ID.test(input.messageId)) {
    throw new Error(
      `messageId must have the form <id@domain>, got ${JSON.stringify(input.messageId)}`,
    );
  }
  if (!input.to.length) throw new Error('a message needs at least one To address');
  const values: [string, string | undefined][] = [['subject', input.subject]];
  const addresses = [
    input.from,
    ...input.to,
    ...(input.cc ?? []),
    ...(input.replyTo ? [input.replyTo] : []),
  ];
  for (const { email, name } of addresses) values.push(['address', email], ['display name', name]);
  for (const a of input.attachments) {
    values.push(
      ['attachment file_name', a.file_name],
      ['attachment content_type', a.content_type],
      ['attachment content_id', a.content_id],
      ['attachment content_disposition', a.content_disposition],
    );
  }
  for (const [name, value] of Object.entries(input.headers)) {
    if (unsafeHeaderText(name) || !/^[\x21-\x39\x3b-\x7e]+$/.test(name)) {
      throw new ContentRuleError(`header name ${JSON.stringify(name)} is invalid`);
    }
    const lower = name.toLowerCase();
    if (isReservedHeader(lower) || lower === 'message-id') {
      throw new ContentRuleError(`header ${JSON.stringify(name)} cannot be given`);
    }
    values.push([`header ${JSON.stringify(name)}`, value]);
  }
  for (const [what, value] of values) {
    const problem = value === undefined ? undefined : unsafeHeaderText(value);
    if (problem) throw new ContentRuleError(`${what} ${problem}`);
  }
}

function isAmpPart(part: Attachment): boolean {
  return (
    part.contentType.toLowerCase() === AMP_TYPE &&
    !part.filename &&
    part.contentDisposition !== 'attachment'
  );
}

function decodeText(part: Attachment): string {
  const contentType = part.headers.get('content-type') as
    { params?: { charset?: string } } | undefined;
  try {
    return new TextDecoder(contentType?.params?.charset ?? 'utf-8').decode(part.content);
  } catch {
    return part.content.toString('utf8');
  }
}
