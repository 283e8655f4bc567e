/** RFC 5322 2.1.1: a line of a message is at most 998 octets, not counting its CRLF. */
export const MAX_LINE_OCTETS = 998;

/** Whether a line of `bytes` is longer than {@link MAX_LINE_OCTETS}; CR, LF and CRLF end lines. */
export function hasOverlongLine(bytes: Uint8Array): boolean {
  let octets = 0;
  // An indexed loop: iterating a Buffer with for-of is about ten times slower.
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    if (byte === 0x0a || byte === 0x0d) octets = 0;
    else if (++octets > MAX_LINE_OCTETS) return true;
  }
  return false;
}

/** Whether a line of `text` (a header, say, with folds) is longer than {@link MAX_LINE_OCTETS}. */
export function hasOverlongTextLine(text: string): boolean {
  return text.split(/\r\n|\r|\n/).some((line) => Buffer.byteLength(line) > MAX_LINE_OCTETS);
}
