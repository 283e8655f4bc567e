import type { AttachmentBody } from '@envoi/contracts-messages';

import { type ComposeInput, mimeTreeOf } from './mime';
import { buildMimeTree } from './mime-tree';

const base: ComposeInput = {
  messageId: '<0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c@example.com>',
  date: new Date('2026-01-02T03:04:05Z'),
  from: { email: 'news@example.com', name: 'Example News' },
  to: [{ email: 'ann@example.net', name: 'Ann' }],
  subject: 'Hello',
  attachments: [],
  headers: {},
};

function file(
  content_type: string,
  file_name: string,
  bytes: Buffer,
  extra: Partial<AttachmentBody> = {},
): AttachmentBody {
  return { data: bytes.toString('base64'), base64: true, content_type, file_name, ...extra };
}

/** Bytes 0–255 repeated: every octet, CR and LF alone included. */
const allOctets = Buffer.from(Array.from({ length: 3 * 256 + 7 }, (_, index) => index % 256));
const longLine = 'word '.repeat(60) + 'x'.repeat(300);
const trailingSpaces = 'naïve line with trailing spaces   \r\nand tabs\t\t\nend   ';
/** More than one 64 KiB slice of Nodemailer's QP encoder, with a soft break across the seam. */
const bigText = `${'a'.repeat(30_000)} é ${'b '.repeat(20_000)}\n`.repeat(2);

const corpus: Array<[string, Partial<ComposeInput>]> = [
  ['text', { text: 'Hello Ann\nsecond line' }],
  ['html', { html: '<p>Hello <b>Ann</b></p>' }],
  ['text and html', { text: 'Hello Ann', html: '<p>Hello Ann</p>' }],
  ['text, amp and html', { text: 't', amp: '<html ⚡4email></html>', html: '<p>h</p>' }],
  ['empty text', { text: '' }],
  ['unicode text', { text: 'Grüße, 世界 🎉\r\nLine two', html: '<p>Grüße 🎉</p>' }],
  ['long lines', { text: longLine, html: `<p>${longLine}</p>` }],
  ['trailing whitespace', { text: trailingSpaces, html: trailingSpaces }],
  ['lone CR and LF', { text: 'a\rb\nc\r\nd\r', html: 'x\n\ny\r' }],
  ['text beyond one QP slice', { text: bigText, html: `<pre>${bigText}</pre>` }],
  ['mostly non-ASCII text', { text: '日本語のテキスト'.repeat(40) }],
  [
    'attachments',
    {
      text: 'see attached',
      attachments: [
        file('application/pdf', 'invoice.pdf', Buffer.from('%PDF-1.7 …')),
        file('application/octet-stream', 'all.bin', allOctets),
        file('text/plain', 'notes.txt', Buffer.from('plain notes\r\nwith trailing space ')),
        file('text/csv', 'données été.csv', Buffer.from('a;b\né;ü\n'.repeat(50))),
        file('application/octet-stream', 'empty.bin', Buffer.alloc(0)),
      ],
    },
  ],
  [
    'inline cid',
    {
      html: '<img src="cid:logo@example.com">',
      attachments: [
        file('image/png', 'logo.png', allOctets, { content_id: '<logo@example.com>' }),
        file('image/gif', 'spacer.gif', Buffer.from('GIF89a'), {
          content_id: '<spacer@example.com>',
          content_disposition: 'attachment',
        }),
      ],
    },
  ],
  [
    'inline cid and attachment with text',
    {
      text: 'plain',
      html: '<img src="cid:logo@example.com">',
      attachments: [
        file('image/png', 'logo.png', allOctets, { content_id: '<logo@example.com>' }),
        file('application/pdf', 'a "quoted"; name.pdf', Buffer.from('%PDF')),
      ],
    },
  ],
  [
    'attached messages',
    {
      text: 'forwarded',
      attachments: [
        file('message/rfc822', 'fwd.eml', Buffer.from('Subject: hi\nFrom: a@b.c\n\nbody\n')),
        file('message/rfc822', 'no-break.eml', Buffer.from('Subject: x\r\n\r\nends without')),
      ],
    },
  ],
  ['only an attachment', { attachments: [file('image/png', 'p.png', allOctets)] }],
  [
    'custom headers',
    {
      text: 't',
      headers: {
        'X-Campaign': 'spring-2026',
        'x-lower-case': 'kept as given',
        'List-Unsubscribe': '<mailto:unsub@example.com>, <https://example.com/u?id=1>',
        'X-Unicode': 'Ünïcödé value',
        'X-Long': 'a'.repeat(1200),
        'In-Reply-To': '<parent@example.com>',
      },
    },
  ],
  [
    'unicode subject and names',
    {
      subject: 'Ihre Bestellung „Grüße“ 🎉 — '.repeat(6),
      from: { email: 'shop@example.com', name: 'Bücher & Söhne, GmbH' },
      to: [{ email: 'ann@example.net', name: 'Änn "the" Ørsted' }, { email: 'bob@example.net' }],
      cc: [{ email: 'cc@example.net', name: '张伟' }],
      replyTo: { email: 'reply@example.com', name: 'Reply Desk' },
      text: 'x',
    },
  ],
  ['subject without spaces', { subject: 'y'.repeat(1500), text: 'x' }],
];

describe('buildMimeTree', () => {
  it.each(corpus)('writes the bytes of Nodemailer build() for %s', async (_name, overrides) => {
    const input = { ...base, ...overrides };
    const streamed = await mimeTreeOf(input).build();
    const built = buildMimeTree(mimeTreeOf(input));
    expect(built.toString('latin1')).toBe(streamed.toString('latin1'));
    expect(built.equals(streamed)).toBe(true);
  });

  it.each(corpus)(
    'writes the bytes of Nodemailer build() for another recipient of %s (its texts encoded before)',
    async (_name, overrides) => {
      const first = { ...base, ...overrides };
      buildMimeTree(mimeTreeOf(first));
      const second: ComposeInput = {
        ...first,
        messageId: '<1290a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c@example.com>',
        to: [{ email: 'bob@example.net', name: 'Bob' }],
      };
      const streamed = await mimeTreeOf(second).build();
      expect(buildMimeTree(mimeTreeOf(second)).equals(streamed)).toBe(true);
    },
  );

  it('refuses a node whose content is not a string or Buffer', () => {
    const tree = mimeTreeOf({ ...base, text: 'x' });
    tree.content = { href: 'http://127.0.0.1/' };
    expect(() => buildMimeTree(tree)).toThrow(/string or Buffer content/);
  });
});
