import { randomBytes } from 'node:crypto';

import type { AttachmentBody } from '@envoi/contracts-messages';
import { type AddressObject, simpleParser } from 'mailparser';

import { ContentRuleError } from './header-rules';
import { type ComposeInput, composeMime, parseMime } from './mime';

const MESSAGE_ID = '<0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c@example.com>';

function input(overrides: Partial<ComposeInput> = {}): ComposeInput {
  return {
    messageId: MESSAGE_ID,
    date: new Date('2026-01-02T03:04:05Z'),
    from: { email: 'news@example.com', name: 'Example News' },
    to: [{ email: 'ann@example.net', name: 'Ann' }],
    subject: 'Hello',
    text: 'Hello Ann',
    attachments: [],
    headers: {},
    ...overrides,
  };
}

const png = (content_id?: string, extra: Partial<AttachmentBody> = {}): AttachmentBody => ({
  data: Buffer.from('89504e470d0a1a0a', 'hex').toString('base64'),
  base64: true,
  content_type: 'image/png',
  file_name: 'logo.png',
  ...(content_id === undefined ? {} : { content_id }),
  ...extra,
});
const pdf: AttachmentBody = {
  data: Buffer.from('%PDF-1.7').toString('base64'),
  base64: true,
  content_type: 'application/pdf',
  file_name: 'invoice.pdf',
};

interface MimePart {
  type: string;
  headers: string;
  children: MimePart[];
}

/** A minimal MIME tree reader: enough to check the structure Nodemailer produced. */
function tree(raw: string): MimePart {
  const split = raw.indexOf('\r\n\r\n');
  const headers = (split < 0 ? raw : raw.slice(0, split)).replace(/\r\n[ \t]+/g, ' ');
  const body = split < 0 ? '' : raw.slice(split + 4);
  const type = (/^content-type:\s*([^;\r\n]+)/im.exec(headers)?.[1] ?? 'text/plain')
    .trim()
    .toLowerCase();
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(headers)?.[1];
  if (!type.startsWith('multipart/') || !boundary) return { type, headers, children: [] };
  const children = body
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((piece) => tree(piece.replace(/^\r\n/, '')));
  return { type, headers, children };
}

function shape(part: MimePart): string {
  return part.children.length ? `${part.type}(${part.children.map(shape).join(',')})` : part.type;
}

function find(part: MimePart, type: string): MimePart | undefined {
  if (part.type === type) return part;
  for (const child of part.children) {
    const found = find(child, type);
    if (found) return found;
  }
  return undefined;
}

async function compose(overrides: Partial<ComposeInput> = {}) {
  const raw = await composeMime(input(overrides));
  const text = raw.toString('latin1');
  return { raw, text, root: tree(text), mail: await simpleParser(raw, { keepCidLinks: true }) };
}

function addresses(field: AddressObject | AddressObject[] | undefined) {
  return [field ?? []]
    .flat()
    .flatMap((object) => object.value.map(({ name, address }) => ({ name, address })));
}

describe('composeMime', () => {
  describe('determinism', () => {
    const full = input({
      html: '<p>Hi <img src="cid:logo@example.com"></p>',
      amp: '<html amp4email></html>',
      attachments: [png('<logo@example.com>'), pdf],
      headers: { 'X-Campaign': 'spring' },
    });

    it('composes the same input to the same bytes', async () => {
      const first = await composeMime(full);
      const second = await composeMime(structuredClone(full));
      expect(second.equals(first)).toBe(true);
    });

    it('derives the multipart boundaries from the Message-ID', async () => {
      const boundaries = (raw: Buffer) =>
        [...raw.toString('latin1').matchAll(/boundary="?([^";\r\n]+)/g)].map((match) => match[1]);
      const first = boundaries(await composeMime(full));
      const other = boundaries(
        await composeMime({
          ...full,
          messageId: '<0190a7e2-5c1e-7b3a-9f00-000000000000@example.com>',
        }),
      );
      expect(first.length).toBeGreaterThanOrEqual(3);
      expect(other).toHaveLength(first.length);
      expect(other.some((boundary, index) => boundary === first[index])).toBe(false);
    });
  });

  describe('structure', () => {
    it.each<[string, Partial<ComposeInput>, string]>([
      ['text only', { text: 'Hi' }, 'text/plain'],
      ['html only', { text: undefined, html: '<p>Hi</p>' }, 'text/html'],
      ['text and html', { html: '<p>Hi</p>' }, 'multipart/alternative(text/plain,text/html)'],
      [
        'text, AMP and html (AMP between them, as Gmail requires)',
        { amp: '<html amp4email></html>', html: '<p>Hi</p>' },
        'multipart/alternative(text/plain,text/x-amp-html,text/html)',
      ],
      [
        'html with an inline image',
        {
          text: undefined,
          html: '<img src="cid:logo@example.com">',
          attachments: [png('<logo@example.com>')],
        },
        'multipart/related(text/html,image/png)',
      ],
      [
        'text with an attachment',
        { attachments: [pdf] },
        'multipart/mixed(text/plain,application/pdf)',
      ],
      [
        'everything',
        {
          amp: '<html amp4email></html>',
          html: '<img src="cid:logo@example.com">',
          attachments: [png('<logo@example.com>'), pdf],
        },
        'multipart/mixed(multipart/alternative(text/plain,text/x-amp-html,multipart/related(text/html,image/png)),application/pdf)',
      ],
    ])('%s', async (_case, overrides, expected) => {
      const { root } = await compose(overrides);
      expect(shape(root)).toBe(expected);
    });
  });

  describe('inline images and attachments', () => {
    it('makes a content_id in angle brackets an inline image in the related part', async () => {
      const { root, mail } = await compose({
        html: '<img src="cid:logo@example.com">',
        attachments: [png('<logo@example.com>')],
      });
      const image = find(find(root, 'multipart/related') ?? root, 'image/png');
      expect(image?.headers).toMatch(/^Content-ID: <logo@example\.com>$/m);
      expect(image?.headers).toMatch(/^Content-Disposition: inline; filename=logo\.png$/m);
      const [attachment] = mail.attachments;
      expect(attachment).toMatchObject({
        related: true,
        cid: 'logo@example.com',
        contentDisposition: 'inline',
      });
      expect(mail.html).toBe('<img src="cid:logo@example.com">');
    });

    it('delivers a content_id without brackets as a normal attachment', async () => {
      const { root, mail } = await compose({
        html: '<img src="cid:logo@example.com">',
        attachments: [png('logo@example.com')],
      });
      expect(shape(root)).toBe(
        'multipart/mixed(multipart/alternative(text/plain,text/html),image/png)',
      );
      const image = find(root, 'image/png');
      expect(image?.headers).not.toMatch(/^Content-ID:/im);
      expect(image?.headers).toMatch(/^Content-Disposition: attachment; filename=logo\.png$/m);
      expect(mail.attachments[0]?.contentDisposition).toBe('attachment');
      expect(mail.attachments[0]?.related).toBeFalsy();
      expect(mail.attachments[0]?.cid).toBeUndefined();
    });

    it('honours content_disposition', async () => {
      const { root } = await compose({
        html: '<p>x</p>',
        attachments: [
          png('<logo@example.com>', { content_disposition: 'attachment' }),
          { ...pdf, content_disposition: 'INLINE' },
        ],
      });
      expect(find(root, 'image/png')?.headers).toMatch(/^Content-Disposition: attachment;/m);
      expect(find(root, 'image/png')?.headers).toMatch(/^Content-ID: <logo@example\.com>$/m);
      expect(find(root, 'application/pdf')?.headers).toMatch(/^Content-Disposition: inline;/m);
    });

    it('round-trips base64 data byte for byte', async () => {
      const bytes = Buffer.concat([
        Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
        randomBytes(10_000),
      ]);
      const wrapped = bytes.toString('base64').replace(/.{76}/g, '$&\r\n');
      const { mail } = await compose({
        attachments: [
          {
            data: wrapped,
            base64: true,
            content_type: 'application/octet-stream',
            file_name: 'b.bin',
          },
        ],
      });
      expect(mail.attachments[0]?.content.equals(bytes)).toBe(true);
    });

    it('round-trips text data byte for byte (UTF-8, every line ending)', async () => {
      const data = 'a,b\nc,d\r\nlone\rcr\0nul ü € 😀\u2028end\n';
      const { mail } = await compose({
        attachments: [{ data, content_type: 'text/csv', file_name: 'report ü.csv' }],
      });
      const [attachment] = mail.attachments;
      expect(attachment?.content.equals(Buffer.from(data, 'utf8'))).toBe(true);
      expect(attachment?.filename).toBe('report ü.csv');
      expect(attachment?.contentType).toBe('text/csv');
    });
  });

  describe('headers', () => {
    it('writes the Message-ID verbatim, once', async () => {
      const { text, mail } = await compose();
      expect(text).toContain(`\r\nMessage-ID: ${MESSAGE_ID}\r\n`);
      expect(text.match(/^message-id:/gim)).toHaveLength(1);
      expect(mail.messageId).toBe(MESSAGE_ID);
    });

    it('keeps custom headers with their case and value', async () => {
      const { raw, text, mail } = await compose({
        headers: {
          'x-CUSTOM-header': 'Value 1',
          'List-Unsubscribe': '<mailto:unsubscribe@example.com>, <https://example.com/u/1>',
          'X-Greeting': 'Grüße 😀',
          'In-Reply-To': '<earlier@example.com>',
          key: 'not one header',
          value: 'with the previous',
        },
      });
      expect(text).toMatch(/^x-CUSTOM-header: Value 1\r$/m);
      expect(text).toMatch(/^List-Unsubscribe: <mailto:unsubscribe@example\.com>,/m);
      expect(text).toMatch(/^In-Reply-To: <earlier@example\.com>\r$/m);
      expect(text).toMatch(/^key: not one header\r$/m);
      expect(text).toMatch(/^value: with the previous\r$/m);
      expect(text).toMatch(/^X-Greeting: =\?UTF-8\?[BQ]\?/m);
      expect(mail.headers.get('x-custom-header')).toBe('Value 1');
      expect((await parseMime(raw)).headers['X-Greeting']).toEqual(['Grüße 😀']);
    });

    it('never writes Bcc or X-Mailer', async () => {
      const { text } = await compose({ cc: [{ email: 'cc@example.net' }], html: '<p>x</p>' });
      expect(text).not.toMatch(/^bcc:/im);
      expect(text).not.toMatch(/^x-mailer:/im);
    });

    it('encodes UTF-8 subject and display names, and parses them back', async () => {
      const subject = 'Grüße 😀 — “quoted” =?not-a-word?=';
      const { raw, mail } = await compose({
        subject,
        from: { email: 'news@example.com', name: 'Zoë Ünal' },
        to: [
          { email: 'ann@example.net', name: 'Doe, "Jane" <x@evil.test>' },
          { email: 'bob@example.net', name: '山田 太郎' },
        ],
        cc: [{ email: 'cy@example.net', name: 'Cy' }, { email: 'di@example.net' }],
        replyTo: { email: 'help@example.com', name: 'Help Désk' },
      });
      expect(raw.every((byte) => byte < 0x80)).toBe(true);
      expect(mail.subject).toBe(subject);
      expect(addresses(mail.from)).toEqual([{ name: 'Zoë Ünal', address: 'news@example.com' }]);
      expect(addresses(mail.to)).toEqual([
        { name: 'Doe, "Jane" <x@evil.test>', address: 'ann@example.net' },
        { name: '山田 太郎', address: 'bob@example.net' },
      ]);
      expect(addresses(mail.cc)).toEqual([
        { name: 'Cy', address: 'cy@example.net' },
        { name: '', address: 'di@example.net' },
      ]);
      expect(addresses(mail.replyTo)).toEqual([{ name: 'Help Désk', address: 'help@example.com' }]);
    });

    it('writes the date', async () => {
      const { text, mail } = await compose();
      expect(text).toMatch(/^Date: Fri, 02 Jan 2026 03:04:05 \+0000\r$/m);
      expect(mail.date?.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    });

    it('uses CRLF line endings only (a lone CR or LF becomes CRLF)', async () => {
      const { text, mail } = await compose({
        text: 'a\nb\r\nc\rd',
        html: '<p>a\nb</p>\r\n<p>c\rd</p>',
        amp: '<html amp4email>\n</html>',
        attachments: [
          { data: 'x\ny', content_type: 'text/plain', file_name: 'x.txt' },
          {
            data: 'Subject: forwarded\nFrom: a@example.com\n\nbody\rline\n',
            content_type: 'message/rfc822',
            file_name: 'fwd.eml',
          },
        ],
      });
      expect(text).not.toMatch(/[^\r]\n/);
      expect(text).not.toMatch(/\r[^\n]/);
      expect(mail.text).toBe('a\nb\nc\nd');
      const forwarded = mail.attachments.find((a) => a.filename === 'fwd.eml');
      expect(forwarded?.content.toString()).toBe(
        'Subject: forwarded\r\nFrom: a@example.com\r\n\r\nbody\r\nline\r\n',
      );
    });
  });

  describe('defence in depth', () => {
    it.each<[string, Partial<ComposeInput>, string]>([
      ['subject', { subject: 'a\r\nBcc: x@y' }, 'subject must not contain CR, LF or NUL'],
      [
        'display name',
        { from: { email: 'a@b.c', name: 'a\nb' } },
        'display name must not contain CR, LF or NUL',
      ],
      ['address', { to: [{ email: 'a\r@b.c' }] }, 'address must not contain CR, LF or NUL'],
      [
        'header value',
        { headers: { 'X-A': 'a\r\nb' } },
        'header "X-A" must not contain CR, LF or NUL',
      ],
      ['header name', { headers: { 'X-A\nB': 'v' } }, 'header name "X-A\\nB" is invalid'],
      ['reserved header', { headers: { bcc: 'v@x.y' } }, 'header "bcc" cannot be given'],
      [
        'trace header',
        { headers: { 'ARC-Seal': 'i=1; cv=none' } },
        'header "ARC-Seal" cannot be given',
      ],
      [
        'message-id header',
        { headers: { 'Message-Id': '<a@b>' } },
        'header "Message-Id" cannot be given',
      ],
      [
        'attachment file name',
        { attachments: [{ ...pdf, file_name: 'a\0.pdf' }] },
        'attachment file_name must not contain CR, LF or NUL',
      ],
    ])('rejects a line break in the %s', async (_case, overrides, message) => {
      const composing = composeMime(input(overrides));
      await expect(composing).rejects.toThrow(ContentRuleError);
      await expect(composing).rejects.toThrow(message);
    });

    it.each(['0190a7e2@example.com', '<a b@example.com>', '<no-domain>', '<a@b>\r\nBcc: x'])(
      'rejects the message id %j',
      async (messageId) => {
        await expect(composeMime(input({ messageId }))).rejects.toThrow(
          'messageId must have the form',
        );
      },
    );

    it('needs a To address', async () => {
      await expect(composeMime(input({ to: [] }))).rejects.toThrow('at least one To address');
    });
  });

  describe('line length (RFC 5322 2.1.1)', () => {
    /** The longest line's octets, CRLF not counted. */
    function longestLine(raw: Buffer): number {
      return Math.max(
        ...raw
          .toString('latin1')
          .split('\r\n')
          .map((line) => line.length),
      );
    }

    const long = (unit: string, length: number) => unit.repeat(Math.ceil(length / unit.length));

    it.each<[string, Partial<ComposeInput>]>([
      ['a 5 000-character HTML line', { html: `<p>${long('x', 5_000)}</p>` }],
      ['a 5 000-character text line', { text: long('y', 5_000) }],
      ['a 5 000-character AMP line', { amp: `<html amp4email>${long('z', 5_000)}</html>` }],
      ['a non-ASCII HTML line', { html: `<p>${long('é€', 5_000)}</p>` }],
      ['a 998-character subject without spaces', { subject: long('s', 998) }],
      ['a 2 000-character rendered subject without spaces', { subject: long('s', 2_000) }],
      ['a 2 000-character non-ASCII subject', { subject: long('Grüße ', 2_000) }],
      ['a subject of one long word among short ones', { subject: `Hi ${long('w', 1_200)} you` }],
      [
        'a 1 500-character header value without spaces',
        { headers: { 'X-Data': long('d', 1_500) } },
      ],
      ['a 1 500-character non-ASCII header value', { headers: { 'X-Data': long('ü', 1_500) } }],
    ])(
      'never writes a line over 998 octets for %s, and the value reads back',
      async (_case, overrides) => {
        const composed = input(overrides);
        const raw = await composeMime(composed);
        expect(longestLine(raw)).toBeLessThanOrEqual(998);
        const parsed = await parseMime(raw);
        expect(parsed.headers['Subject']).toEqual([composed.subject]);
        for (const [name, value] of Object.entries(composed.headers)) {
          expect(parsed.headers[name]).toEqual([value]);
        }
        const parts = Object.fromEntries(
          // mailparser ends a 7bit text/plain part with a line break.
          parsed.parts.map((part) => [part.content_type, part.content.replace(/\n$/, '')]),
        );
        expect(parts).toEqual({
          ...(composed.text === undefined ? {} : { 'text/plain': composed.text }),
          ...(composed.amp === undefined ? {} : { 'text/x-amp-html': composed.amp }),
          ...(composed.html === undefined ? {} : { 'text/html': composed.html }),
        });
      },
    );

    it('keeps values that fold at their spaces as they are', async () => {
      const words = long('word ', 2_000).trim();
      const { text } = await compose({ subject: words, headers: { 'X-Words': words } });
      expect(text).toMatch(/^Subject: word word/m);
      expect(text).toMatch(/^X-Words: word word/m);
      expect(text).not.toContain('=?');
    });

    it('encodes a value that cannot be folded the same way every time', async () => {
      const overrides = { subject: long('s', 998), headers: { 'X-Data': long('d', 1_500) } };
      const first = await composeMime(input(overrides));
      expect(first.toString('latin1')).toMatch(/^Subject: =\?UTF-8\?Q\?s+\?=\r\n =\?UTF-8\?Q\?s+/m);
      expect((await composeMime(input(overrides))).equals(first)).toBe(true);
    });

    it.each(['References', 'In-Reply-To', 'reply-to'])(
      'refuses a %s header that cannot be folded (an encoded word there would be read literally)',
      async (name) => {
        const composing = composeMime(
          input({ headers: { [name]: `<${long('r', 1_200)}@example.com>` } }),
        );
        await expect(composing).rejects.toThrow(ContentRuleError);
        await expect(composing).rejects.toThrow(
          `header "${name}" has a word too long to fold into lines of at most 998 octets`,
        );
      },
    );

    it('gives a text attachment with long lines quoted-printable or base64', async () => {
      const data = long('a', 3_000);
      const { raw, mail } = await compose({
        attachments: [{ data, content_type: 'text/plain', file_name: 'long.txt' }],
      });
      expect(longestLine(raw)).toBeLessThanOrEqual(998);
      expect(mail.attachments[0]?.content.toString()).toBe(data);
    });

    it('writes a message/rfc822 attachment whose lines fit as it is', async () => {
      const data = `Subject: forwarded\r\n\r\n${long('m', 998)}\r\n`;
      const { raw, mail } = await compose({
        attachments: [{ data, content_type: 'message/rfc822', file_name: 'fwd.eml' }],
      });
      expect(longestLine(raw)).toBe(998);
      expect(mail.attachments[0]?.content.toString()).toBe(data);
    });

    it('refuses a message/rfc822 attachment with a longer line (it cannot be encoded)', async () => {
      const composing = composeMime(
        input({
          attachments: [
            {
              data: `Subject: forwarded\r\n\r\n${long('m', 999)}\r\n`,
              content_type: 'message/rfc822',
              file_name: 'fwd.eml',
            },
          ],
        }),
      );
      await expect(composing).rejects.toThrow(ContentRuleError);
      await expect(composing).rejects.toThrow(
        'the message would have a line longer than 998 octets (RFC 5322 2.1.1)',
      );
    });
  });
});

describe('parseMime', () => {
  it('gives the content_parsed shape of a composed message', async () => {
    const raw = await composeMime(
      input({
        subject: 'Grüße',
        text: 'Hello\nAnn ü',
        amp: '<html amp4email><body>AMP ü</body></html>',
        html: '<p>Hello <img src="cid:logo@example.com"></p>',
        attachments: [png('<logo@example.com>'), pdf],
        headers: { 'x-CUSTOM-header': 'A', 'X-Long': 'word '.repeat(40).trim() },
      }),
    );
    const parsed = await parseMime(raw);
    expect(parsed.parts).toEqual([
      { content_type: 'text/plain', content: 'Hello\nAnn ü' },
      { content_type: 'text/x-amp-html', content: '<html amp4email><body>AMP ü</body></html>' },
      { content_type: 'text/html', content: '<p>Hello <img src="cid:logo@example.com"></p>' },
    ]);
    expect(parsed.attachments).toEqual([
      {
        filename: 'logo.png',
        content: png().data,
        content_type: 'image/png',
        content_id: 'logo@example.com',
      },
      {
        filename: 'invoice.pdf',
        content: pdf.data,
        content_type: 'application/pdf',
        content_id: '',
      },
    ]);
    expect(parsed.headers).toMatchObject({
      Subject: ['Grüße'],
      From: ['Example News <news@example.com>'],
      To: ['Ann <ann@example.net>'],
      'Message-ID': [MESSAGE_ID],
      'MIME-Version': ['1.0'],
      'x-CUSTOM-header': ['A'],
      'X-Long': ['word '.repeat(40).trim()],
    });
    expect(parsed.headers['Content-Type']?.[0]).toMatch(/^multipart\/mixed; boundary=/);
    expect(Object.values(parsed.headers).flat().join('')).not.toMatch(/[\r\n]/);
  });

  it('lists a repeated header once with every value, under its first spelling', async () => {
    const raw = Buffer.from(
      [
        'Received: from a by b',
        'Received: from c',
        '  by d',
        'X-Dup: 1',
        'x-dup: 2',
        'Subject: =?utf-8?B?w6kg?= =?utf-8?Q?=C3=A9?=',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<p>only html</p>',
        '',
      ].join('\r\n'),
    );
    const parsed = await parseMime(raw);
    expect(parsed.headers).toEqual({
      Received: ['from a by b', 'from c  by d'],
      'X-Dup': ['1', '2'],
      Subject: ['é é'],
      'Content-Type': ['text/html; charset=utf-8'],
    });
    expect(parsed.parts).toEqual([{ content_type: 'text/html', content: '<p>only html</p>\n' }]);
    expect(parsed.attachments).toEqual([]);
  });

  it('keeps an AMP file sent as an attachment an attachment', async () => {
    const data = '<html amp4email></html>';
    const parsed = await parseMime(
      await composeMime(
        input({ attachments: [{ data, content_type: 'text/x-amp-html', file_name: 'amp.html' }] }),
      ),
    );
    expect(parsed.parts).toEqual([{ content_type: 'text/plain', content: 'Hello Ann' }]);
    expect(parsed.attachments).toEqual([
      {
        filename: 'amp.html',
        content: Buffer.from(data).toString('base64'),
        content_type: 'text/x-amp-html',
        content_id: '',
      },
    ]);
  });
});
