/** RFC 2045 6.7 and 6.8: encoded lines are at most 76 characters, not counting the line break. */
const MAX_ENCODED_LINE = 76;

const EQUALS = 0x3d;
const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;

function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
}

/** The length of the line break at `index` (CRLF or LF), 0 when there is none. */
function lineBreakAt(bytes: Uint8Array, index: number): number {
  if (bytes[index] === LF) return 1;
  if (bytes[index] === CR && bytes[index + 1] === LF) return 2;
  return 0;
}

/**
 * Decodes quoted-printable (RFC 2045 6.7): `=XX` octets and soft line breaks (`=` then optional
 * whitespace then CRLF or LF, or `=` at the very end) go; anything else, a stray `=` included,
 * is kept as it is.
 */
export function decodeQuotedPrintable(encoded: Uint8Array): Buffer {
  const decoded = Buffer.allocUnsafe(encoded.length);
  let length = 0;
  for (let index = 0; index < encoded.length; index++) {
    const byte = encoded[index];
    if (byte !== EQUALS) {
      decoded[length++] = byte;
      continue;
    }
    const high = hexValue(encoded[index + 1]);
    const low = hexValue(encoded[index + 2]);
    if (high >= 0 && low >= 0) {
      decoded[length++] = high * 16 + low;
      index += 2;
      continue;
    }
    let next = index + 1;
    while (encoded[next] === SPACE || encoded[next] === TAB) next++;
    const lineBreak = lineBreakAt(encoded, next);
    if (lineBreak > 0 || next >= encoded.length) {
      index = next + lineBreak - 1;
      continue;
    }
    decoded[length++] = byte;
  }
  return decoded.subarray(0, length);
}

function isLiteral(byte: number): boolean {
  return (byte >= 0x21 && byte <= 0x7e && byte !== EQUALS) || byte === SPACE || byte === TAB;
}

function escaped(byte: number): string {
  return `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
}

/**
 * Encodes `bytes` as quoted-printable with `eol` line breaks: the content's own line breaks (CRLF
 * or LF) become hard breaks, longer lines get soft breaks so no line exceeds 76 characters, and
 * whitespace that would end a line is escaped.
 */
export function encodeQuotedPrintable(bytes: Uint8Array, eol: string): string {
  const lines: string[] = [];
  let line = '';
  for (let index = 0; index < bytes.length; index++) {
    const lineBreak = lineBreakAt(bytes, index);
    if (lineBreak > 0) {
      lines.push(line, eol);
      line = '';
      index += lineBreak - 1;
      continue;
    }
    const byte = bytes[index];
    const endsLine = index + 1 === bytes.length || lineBreakAt(bytes, index + 1) > 0;
    const isWhitespace = byte === SPACE || byte === TAB;
    const token =
      isLiteral(byte) && !(isWhitespace && endsLine) ? String.fromCharCode(byte) : escaped(byte);
    // A soft break takes one character (`=`), except before the line's very last token.
    const room = endsLine ? MAX_ENCODED_LINE : MAX_ENCODED_LINE - 1;
    if (line.length + token.length > room) {
      lines.push(line, `=${eol}`);
      line = '';
    }
    line += token;
  }
  lines.push(line);
  return lines.join('');
}

/** Encodes `bytes` as base64 in lines of 76 characters separated by `eol`. */
export function encodeBase64Lines(bytes: Uint8Array, eol: string): string {
  const encoded = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  const lines: string[] = [];
  for (let start = 0; start < encoded.length; start += MAX_ENCODED_LINE) {
    lines.push(encoded.slice(start, start + MAX_ENCODED_LINE));
  }
  return lines.join(eol);
}
