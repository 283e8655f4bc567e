import { Encoder } from 'nodemailer/lib/qp';

import { nodemailerQuotedPrintable } from './mime-tree-qp';

async function streamed(content: Buffer, binary: boolean): Promise<string> {
  const encoder = new Encoder({ binary });
  const chunks: Buffer[] = [];
  encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => encoder.on('end', resolve));
  encoder.end(content);
  await ended;
  return Buffer.concat(chunks).toString('latin1');
}

const samples: Array<[string, Buffer]> = [
  ['every octet', Buffer.from(Array.from({ length: 1024 }, (_, index) => index % 256))],
  ['lone and paired breaks', Buffer.from('a\rb\nc\r\nd \r\ne\t\n\r\rf\r')],
  ['trailing whitespace', Buffer.from('ends with spaces and a CR  \t \r')],
  ['two slices', Buffer.from(`${'x'.repeat(65_535)} \r\n${'y'.repeat(70_000)}`)],
  ['empty', Buffer.alloc(0)],
];

describe('nodemailerQuotedPrintable', () => {
  it.each(samples)('matches qp.Encoder for %s, text and binary', async (_name, content) => {
    for (const binary of [false, true]) {
      expect(nodemailerQuotedPrintable(content, binary)).toBe(await streamed(content, binary));
    }
  });
});
