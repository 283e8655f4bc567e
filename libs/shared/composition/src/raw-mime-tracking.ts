import type { HtmlTracker, TrackingChoice } from './html-tracker';
import type { TrackedLink } from './html-tracking';
import { hasOverlongLine } from './line-length';
import { htmlLeaves, lineBreakOf, type MimeEntity, parseContentType } from './mime-entities';
import {
  decodeQuotedPrintable,
  encodeBase64Lines,
  encodeQuotedPrintable,
} from './transfer-encoding';

/** A raw message as sent with tracking, its tracked links, and why any HTML part was left alone. */
export interface TrackedRaw {
  raw: Buffer;
  links: TrackedLink[];
  skipped: string[];
}

/** New bytes for raw[start, end). */
interface Splice {
  start: number;
  end: number;
  bytes: Buffer;
}

type Charset = 'utf8' | 'latin1';

const IDENTITY_ENCODINGS = new Set(['7bit', '8bit', 'binary']);
const LATIN1_CHARSETS = new Set(['us-ascii', 'ascii', 'iso-8859-1', 'latin1', 'iso_8859-1']);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The part's text and the charset it is written back in, or null when it cannot be read losslessly. */
function decodeText(
  bytes: Buffer,
  charset: string | undefined,
): { text: string; charset: Charset } | null {
  const isUtf8 = charset === 'utf-8' || charset === 'utf8';
  if (isUtf8 || charset === undefined) {
    try {
      return { text: strictUtf8.decode(bytes), charset: 'utf8' };
    } catch {
      if (isUtf8) return null;
    }
  }
  if (charset === undefined || LATIN1_CHARSETS.has(charset)) {
    return { text: bytes.toString('latin1'), charset: 'latin1' };
  }
  return null;
}

/** The line breaks that end `bytes`. */
function trailingLineBreaks(bytes: Buffer): Buffer {
  let start = bytes.length;
  while (start > 0 && (bytes[start - 1] === 0x0a || bytes[start - 1] === 0x0d)) start--;
  return bytes.subarray(start);
}

/**
 * Adds open and click tracking to the text/html parts of a raw MIME message, as composition does
 * for API mail (platform notes 3.3): each HTML leaf that is not an attachment is decoded
 * (7bit, 8bit, quoted-printable, base64; utf-8, us-ascii, latin1 or no charset), tracked, encoded
 * again the same way (7bit or 8bit becomes quoted-printable when a line would pass 998 octets) and
 * spliced back; every other byte stays as it was. Link positions run on across HTML parts.
 * A malformed message, or one with tracking off, is returned as it is.
 */
export function trackRawMime(
  raw: Buffer,
  tracker: HtmlTracker,
  messageId: string,
  choice: TrackingChoice,
): TrackedRaw {
  const untouched: TrackedRaw = { raw, links: [], skipped: [] };
  if (!choice.opens && !choice.clicks) return untouched;
  const eol = lineBreakOf(raw);
  const leaves = htmlLeaves(raw, eol);
  if (!leaves) return { ...untouched, skipped: ['malformed MIME structure'] };
  const links: TrackedLink[] = [];
  const skipped: string[] = [];
  const splices: Splice[] = [];
  for (const leaf of leaves) {
    const result = trackLeaf(raw, leaf, eol, (html) =>
      tracker.track(html, messageId, choice, links.length),
    );
    if (typeof result === 'string') {
      skipped.push(result);
      continue;
    }
    if (!result) continue;
    links.push(...result.links);
    splices.push(...result.splices);
  }
  if (splices.length === 0) return { raw, links, skipped };
  return { raw: applySplices(raw, splices), links, skipped };
}

/** The leaf's splices and links; null when tracking changes nothing; why when it is left alone. */
function trackLeaf(
  raw: Buffer,
  leaf: MimeEntity,
  eol: string,
  track: (html: string) => { html: string; links: TrackedLink[] },
): { splices: Splice[]; links: TrackedLink[] } | null | string {
  const encoding = (leaf.headers.get('content-transfer-encoding')?.value ?? '7bit')
    .trim()
    .toLowerCase();
  const contentType = parseContentType(leaf.headers.get('content-type')?.value ?? 'text/html');
  const charset = contentType.params.get('charset')?.trim().toLowerCase();
  const body = raw.subarray(leaf.bodyStart, leaf.bodyEnd);
  let decoded: Buffer;
  if (IDENTITY_ENCODINGS.has(encoding)) decoded = body;
  else if (encoding === 'quoted-printable') decoded = decodeQuotedPrintable(body);
  else if (encoding === 'base64') decoded = Buffer.from(body.toString('latin1'), 'base64');
  else return `an HTML part with transfer encoding ${encoding}`;
  const content = decodeText(decoded, charset);
  if (!content) return `an HTML part in charset ${charset ?? '(none)'}`;
  const tracked = track(content.text);
  if (tracked.html === content.text) return null;
  const html = Buffer.from(tracked.html, content.charset);
  const bodySplice = (bytes: Buffer): Splice => ({
    start: leaf.bodyStart,
    end: leaf.bodyEnd,
    bytes,
  });
  if (encoding === 'base64') {
    const encoded = Buffer.from(encodeBase64Lines(html, eol), 'latin1');
    const bytes = Buffer.concat([encoded, trailingLineBreaks(body)]);
    return { splices: [bodySplice(bytes)], links: tracked.links };
  }
  if (encoding === 'quoted-printable') {
    return {
      splices: [bodySplice(Buffer.from(encodeQuotedPrintable(html, eol), 'latin1'))],
      links: tracked.links,
    };
  }
  if (encoding === 'binary' || !hasOverlongLine(html)) {
    return { splices: [bodySplice(html)], links: tracked.links };
  }
  // A line too long for SMTP: the part goes quoted-printable, its header says so.
  const header = 'Content-Transfer-Encoding: quoted-printable';
  const field = leaf.headers.get('content-transfer-encoding');
  const headerSplice: Splice = field
    ? { start: field.start, end: field.end, bytes: Buffer.from(header, 'latin1') }
    : {
        start: leaf.headerStart,
        end: leaf.headerStart,
        bytes: Buffer.from(header + eol, 'latin1'),
      };
  return {
    splices: [headerSplice, bodySplice(Buffer.from(encodeQuotedPrintable(html, eol), 'latin1'))],
    links: tracked.links,
  };
}

/** `raw` with each splice's range replaced (splices in ascending, non-overlapping order). */
function applySplices(raw: Buffer, splices: readonly Splice[]): Buffer {
  const pieces: Buffer[] = [];
  let copied = 0;
  for (const splice of splices) {
    pieces.push(raw.subarray(copied, splice.start), splice.bytes);
    copied = splice.end;
  }
  pieces.push(raw.subarray(copied));
  return Buffer.concat(pieces);
}
