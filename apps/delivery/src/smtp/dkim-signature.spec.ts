import { generateKeyPairSync } from 'node:crypto';
import type { Readable } from 'node:stream';

import { composeMime } from '@envoi/shared-composition';
import DKIM from 'nodemailer/lib/dkim';

import { dkimSigned, type DkimSigner } from './dkim-signature';
import { DKIM_SIGNED_HEADERS } from './smtp-sender';

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const signer: DkimSigner = {
  domainName: 'sender.example.test',
  keySelector: 'envoi',
  privateKey,
  headerFieldNames: DKIM_SIGNED_HEADERS,
};

async function streamSigned(raw: Buffer, by: DkimSigner = signer): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of new DKIM(by).sign(raw) as Readable) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const composed = () =>
  composeMime({
    messageId: '<7d3c4e5a-0b1c-4d2e-8f90-123456789abc@sender.example.test>',
    date: new Date('2026-11-25T20:00:00Z'),
    from: { email: 'shop@sender.example.test', name: 'Envoi Shop' },
    to: [{ email: 'alex@example.net' }],
    subject: 'Your order   A-10042 is confirmed ✓',
    text: 'Hello Alex,  \n\n\tthanks \t for your order.\n\n\n',
    html: '<p>Hello Alex,</p>\n<p>Thanks   for your order.</p>',
    attachments: [
      {
        file_name: 'a.txt',
        content_type: 'text/plain',
        data: 'eA==',
        base64: true,
      },
    ],
    headers: { 'X-Campaign': 'autumn  sale' },
  });

describe('dkimSigned', () => {
  it.each([
    ['a composed message', composed],
    [
      'bare LF line ends, trailing whitespace and empty lines',
      () =>
        Promise.resolve(
          Buffer.from('From: a@b.test\nSubject:  hi \n  folded\n\nline one  \n\n\t\n\n'),
        ),
    ],
    [
      'a message of headers only',
      () => Promise.resolve(Buffer.from('From: a@b.test\r\nTo: c@d.test\r\n')),
    ],
    ['an empty body', () => Promise.resolve(Buffer.from('From: a@b.test\r\n\r\n'))],
    [
      'a body ending in a lone CR after whitespace',
      () => Promise.resolve(Buffer.from('From: a@b.test\r\n\r\nlast line \t\r')),
    ],
  ])('gives the bytes of nodemailer’s streaming signer: %s', async (_name, message) => {
    const raw = await message();
    const signed = await dkimSigned(raw, signer);
    expect(signed.toString('latin1')).toEqual((await streamSigned(raw)).toString('latin1'));
    expect(signed.toString('latin1')).toMatch(
      /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed;/,
    );
  });

  it('writes an internationalized sending domain and its selector as nodemailer does', async () => {
    const raw = await composed();
    const idn: DkimSigner = { ...signer, domainName: 'Bücher.Example.test', keySelector: 's;1' };

    const signed = (await dkimSigned(raw, idn)).toString('latin1');

    expect(signed).toEqual((await streamSigned(raw, idn)).toString('latin1'));
    expect(signed).toContain('d=xn--bcher-kva.example.test; q=dns/txt; s=s1;');
  });
});
