import { wrap } from 'nodemailer/lib/qp';

/** Nodemailer's QP encoder works on slices of this many bytes (qp.Encoder's ENCODE_SLICE_SIZE). */
const SLICE_BYTES = 64 * 1024;
const LINE_LENGTH = 76;
const HEX = '0123456789ABCDEF';
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;

function isLiteral(byte: number): boolean {
  return (
    byte === TAB ||
    byte === LF ||
    byte === CR ||
    (byte >= 0x20 && byte <= 0x3c) ||
    (byte >= 0x3e && byte <= 0x7e)
  );
}

function isWhitespace(byte: number | undefined): boolean {
  return byte === SPACE || byte === TAB;
}

/** Whether a CR or LF of binary content is half of a CRLF pair (anything else counts as one). */
function isLineBreakByte(
  byte: number,
  previous: number | undefined,
  following: number | undefined,
) {
  if (byte === CR) return following === LF;
  if (byte === LF) return previous === CR;
  return true;
}

function encodeBytes(
  bytes: Buffer,
  next: number | undefined,
  binary: boolean,
  previous: number | undefined,
): string {
  let encoded = '';
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    const following = index + 1 < bytes.length ? bytes[index + 1] : next;
    const before = index > 0 ? bytes[index - 1] : previous;
    const endsLine = following === undefined || following === LF || following === CR;
    const literal =
      isLiteral(byte) &&
      (!binary || isLineBreakByte(byte, before, following)) &&
      !(isWhitespace(byte) && endsLine);
    encoded += literal
      ? String.fromCharCode(byte)
      : `=${HEX[byte >> 4] ?? ''}${HEX[byte & 0x0f] ?? ''}`;
  }
  return encoded;
}

/**
 * The quoted-printable text Nodemailer's `qp.Encoder` stream writes for `content` given as one
 * chunk (as a MIME node's string or Buffer content is), computed without a stream: trailing
 * whitespace is held back and encoded last, the rest in 64 KiB slices each wrapped to 76
 * characters after the previous slice's unfinished line.
 */
export function nodemailerQuotedPrintable(content: Buffer, binary: boolean): string {
  let end = content.length;
  while (end > 0 && (isWhitespace(content[end - 1]) || (binary && content[end - 1] === CR))) end--;
  const heldBack = content.length - end <= SLICE_BYTES;
  const slices = heldBack ? [content.subarray(0, end), content.subarray(end)] : [content];
  let output = '';
  let line = '';
  let lastByte: number | undefined;
  for (const bytes of slices) {
    for (let start = 0; start < bytes.length; start += SLICE_BYTES) {
      const sliceEnd = Math.min(start + SLICE_BYTES, bytes.length);
      const next = sliceEnd < bytes.length ? bytes[sliceEnd] : undefined;
      const wrapped = wrap(
        line + encodeBytes(bytes.subarray(start, sliceEnd), next, binary, lastByte),
        LINE_LENGTH,
      );
      const lastLf = wrapped.lastIndexOf('\n');
      line = wrapped.substring(lastLf + 1);
      output += wrapped.substring(0, lastLf + 1);
      lastByte = bytes[sliceEnd - 1];
    }
  }
  return output + line;
}
