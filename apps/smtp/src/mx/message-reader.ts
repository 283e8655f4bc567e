import type { Readable } from 'node:stream';

export type ReadMessage =
  { outcome: 'read'; bytes: Buffer } | { outcome: 'too_big' } | { outcome: 'line_too_long' };

const LF = 0x0a;

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
  let lineLength = 0;
  let lineTooLong = false;
  for await (const chunk of stream) {
    const bytes = chunk as Buffer;
    size += bytes.length;
    if (size <= maxBytes) chunks.push(bytes);
    for (let index = 0; index < bytes.length && !lineTooLong; index += 1) {
      lineLength = bytes[index] === LF ? 0 : lineLength + 1;
      // The CR of the CRLF is counted with the line: one octet of slack.
      if (lineLength > maxLineOctets + 1) lineTooLong = true;
    }
  }
  if (size > maxBytes) return { outcome: 'too_big' };
  if (lineTooLong) return { outcome: 'line_too_long' };
  return { outcome: 'read', bytes: Buffer.concat(chunks, size) };
}
