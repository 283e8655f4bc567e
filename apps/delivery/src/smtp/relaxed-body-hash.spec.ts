import { composeMime } from '@envoi/shared-composition';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';

import { isRelaxedAlready, relaxedBodyHash } from './relaxed-body-hash';

/** nodemailer's own relaxed body hash, its stream fed in one chunk. */
function nodemailerHash(body: Buffer): Promise<string> {
  const hasher = new RelaxedBody({ hashAlgo: 'sha256' });
  return new Promise((resolve, reject) => {
    hasher.once('hash', (hash: string) => resolve(hash));
    hasher.once('error', reject);
    hasher.resume();
    hasher.end(body);
  });
}

async function composedBody(): Promise<Buffer> {
  const raw = await composeMime({
    messageId: '<7d3c4e5a-0b1c-4d2e-8f90-123456789abc@sender.example.test>',
    date: new Date('2026-11-25T20:00:00Z'),
    from: { email: 'shop@sender.example.test', name: 'Envoi Shop' },
    to: [{ email: 'alex@example.net' }],
    subject: 'Your order',
    text: 'Hello Alex,\n\nThanks for your order: 2 × shirt, €84.90.\n',
    html: `<p>Hello Alex,</p>\n<p>${'Thanks for your order. '.repeat(20)}</p>`,
    attachments: [
      { file_name: 'a.bin', content_type: 'application/pdf', data: 'eA==', base64: true },
    ],
    headers: {},
  });
  return raw.subarray(raw.indexOf('\r\n\r\n') + 4);
}

const canonical: Array<[string, string]> = [
  ['one line with its CRLF', 'hello world\r\n'],
  ['a last line without CRLF', 'hello\r\nworld'],
  ['empty lines inside and at the end', '\r\nfirst\r\n\r\n\r\nsecond\r\n\r\n\r\n'],
  ['a leading space on a line', 'a\r\n b\r\n'],
  ['nothing', ''],
  ['only empty lines', '\r\n\r\n\r\n'],
];

const changed: Array<[string, string]> = [
  ['a space at a line end', 'hello \r\nworld\r\n'],
  ['a space at the end of the body', 'hello '],
  ['two spaces in a row', 'hello  world\r\n'],
  ['a tab', 'hello\tworld\r\n'],
  ['a bare LF', 'hello\nworld\r\n'],
  ['a bare CR', 'hello\rworld\r\n'],
  ['a CR at the very end', 'hello\r'],
  ['a line of whitespace', 'a\r\n \t \r\nb\r\n'],
];

describe('relaxed body hash', () => {
  it.each(canonical)(
    'hashes a body canonical already (%s) as nodemailer does',
    async (_what, text) => {
      const body = Buffer.from(text, 'latin1');
      expect(isRelaxedAlready(body)).toBe(true);
      await expect(relaxedBodyHash(body)).resolves.toBe(await nodemailerHash(body));
    },
  );

  it.each(changed)('hashes a body with %s through the canonicalization', async (_what, text) => {
    const body = Buffer.from(text, 'latin1');
    expect(isRelaxedAlready(body)).toBe(false);
    await expect(relaxedBodyHash(body)).resolves.toBe(await nodemailerHash(body));
  });

  it('finds a composed message canonical already, and hashes it as nodemailer does', async () => {
    const body = await composedBody();
    expect(isRelaxedAlready(body)).toBe(true);
    await expect(relaxedBodyHash(body)).resolves.toBe(await nodemailerHash(body));
  });
});
