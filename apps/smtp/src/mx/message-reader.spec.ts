import { Readable } from 'node:stream';

import { readMessage } from './message-reader';

const chunks = (...parts: string[]) => Readable.from(parts.map((part) => Buffer.from(part)));

describe('readMessage', () => {
  it('returns the bytes as they came', async () => {
    const read = await readMessage(chunks('Subject: x\r\n', '\r\nbody\r\n'), 100, 10);
    expect(read).toEqual({ outcome: 'read', bytes: Buffer.from('Subject: x\r\n\r\nbody\r\n') });
  });

  it('refuses more bytes than the limit', async () => {
    await expect(readMessage(chunks('a'.repeat(60), 'b'.repeat(60)), 100, 1000)).resolves.toEqual({
      outcome: 'too_big',
    });
  });

  it('allows a line of exactly the limit and refuses one octet more, across chunks', async () => {
    await expect(readMessage(chunks('12345', '67890\r\nok\r\n'), 100, 10)).resolves.toMatchObject({
      outcome: 'read',
    });
    await expect(readMessage(chunks('12345', '678901\r\n'), 100, 10)).resolves.toEqual({
      outcome: 'line_too_long',
    });
  });

  it('finds a long line among short ones of one chunk, and takes short lines after a long open one', async () => {
    const long = `ok\r\n${'x'.repeat(11)}\r\nok\r\n`;
    await expect(readMessage(chunks(long), 100, 10)).resolves.toEqual({
      outcome: 'line_too_long',
    });
    const lines = `${'x'.repeat(10)}\r\nshort\r\n${'y'.repeat(10)}`;
    await expect(readMessage(chunks(lines, '\r\nend\r\n'), 100, 10)).resolves.toMatchObject({
      outcome: 'read',
    });
  });
});
