import type { Readable } from 'node:stream';

export type ReadMessage =
  { outcome: 'read'; bytes: Buffer } | { outcome: 'too_big' } | { outcome: 'line_too_long' };

const LF = 0x0a;

/**
 * The length of the line still open after `bytes`, given `open` octets of it before them, or
 * null when a line they end or leave open is longer than `maxLength` octets (its CR counted).
 */
function openLineAfter(bytes: Buffer, open: number, maxLength: number): number | null {
  let length = open;
  let lineStart = 0;
  for (let lf = bytes.indexOf(LF); lf !== -1; lf = bytes.indexOf(LF, lineStart)) {
    if (length + lf - lineStart > maxLength) return null;
    length = 0;
    lineStart = lf + 1;
  }
  length += bytes.length - lineStart;
  return length > maxLength ? null : length;
}

/**
 * The DATA bytes when they stay within `maxBytes` and no line (without its CRLF) is longer than
 * `maxLineOctets`; otherwise the rest is read and dropped, and the reason is returned.
 */
export async function readMessage(
  stream: Readable,
  maxBytes: number,
  maxLineOctets: number,
): Promise<ReadMessage> {
  const chunks: Buffer[] = [];
  let size = 0;
  /** The length of the line still open; null once a line was too long. */
  let lineLength: number | null = 0;
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size <= maxBytes) chunks.push(bytes);
    if (lineLength !== null) {
      // The CR of the CRLF is counted with the line: one octet of slack.
      lineLength = openLineAfter(bytes, lineLength, maxLineOctets + 1);
    }
  }
  if (size > maxBytes) return { outcome: 'too_big' };
  if (lineLength === null) return { outcome: 'line_too_long' };
  return { outcome: 'read', bytes: Buffer.concat(chunks, size) };
}
