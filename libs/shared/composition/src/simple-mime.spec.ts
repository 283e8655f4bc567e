import { createHash } from 'node:crypto';

import { type ComposeInput, composeMime, mimeTreeOf } from './mime';
import { simpleMime } from './simple-mime';

const base: ComposeInput = {
  messageId: '<0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c@example.com>',
  date: new Date('2026-01-02T03:04:05Z'),
  from: { email: 'orders@shop.example.com', name: 'Envoi Shop' },
  to: [{ email: 'alex@inbox.example.net' }],
  subject: 'Your order A-10042 is confirmed',
  attachments: [],
  headers: {},
};

/** As mime.ts derives it from the Message-ID. */
function baseBoundary(messageId: string): string {
  return createHash('sha256').update(messageId).digest('hex').slice(0, 24);
}

/** What Nodemailer's own streaming build() writes for the input: the reference. */
function nodemailerBytes(input: ComposeInput): Promise<Buffer> {
  return mimeTreeOf(input).build();
}

const paragraphs = [
  'Thank you for your order. We have received it and our team is preparing it for dispatch.',
  'If anything is missing, reply to this message within 30 days.',
];
const longLine = 'word '.repeat(60) + 'x'.repeat(300);
const bigText = `${'a'.repeat(30_000)} é ${'b '.repeat(20_000)}\n`.repeat(2);

/** Inputs the fast path takes: each must give Nodemailer's bytes exactly. */
const simple: Array<[string, Partial<ComposeInput>]> = [
  ['text', { text: 'Hello Alex\nsecond line' }],
  ['html', { html: '<p>Hello <b>Alex</b></p>' }],
  [
    'text and html',
    { text: paragraphs.join('\n\n'), html: `<p>${paragraphs.join('</p><p>')}</p>` },
  ],
  ['unicode text and html', { text: 'Grüße, 世界 🎉\r\nLine two', html: '<p>Grüße 🎉</p>' }],
  ['mostly non-ASCII text', { text: '日本語のテキスト'.repeat(40), html: '<p>日本語</p>' }],
  ['long lines', { text: longLine, html: `<p>${longLine}</p>` }],
  ['76 and 77 characters', { text: 'x'.repeat(76), html: 'y'.repeat(77) }],
  ['trailing whitespace', { text: 'line   \r\nand tabs\t\t\nend   ', html: 'x \n' }],
  ['lone CR and LF', { text: 'a\rb\nc\r\nd\r', html: 'x\n\ny\r' }],
  ['dots and From lines', { text: '.\n..hidden\nFrom me\n.', html: '.<p>\n.</p>' }],
  ['control characters', { text: 'bell \u0007 and \u001b escape', html: 'nul-free \u000b' }],
  ['equals signs', { text: 'a=b =?utf-8?q?x?= 3D', html: '<a href="x?a=1&b=2">l</a>' }],
  ['text beyond one QP slice', { text: bigText, html: `<pre>${bigText}</pre>` }],
  ['no display names', { from: { email: 'a@b.example' }, text: 't' }],
  [
    'empty display names',
    {
      from: { email: 'a@b.example', name: '' },
      to: [{ email: 'c@d.example', name: '' }],
      text: 't',
    },
  ],
  [
    'word names',
    {
      from: { email: 'a@b.example', name: 'Shop_2 Team' },
      to: [{ email: 'c@d.example', name: 'Alex 3' }],
      html: 'h',
    },
  ],
  ['spaces around a name', { to: [{ email: 'c@d.example', name: '  Alex  ' }], text: 't' }],
  [
    'dotted and plus local parts',
    {
      from: { email: 'First.Last+tag@mail.example.org' },
      to: [{ email: 'a_b-c@x-y.example' }],
      text: 't',
    },
  ],
  [
    'a long name folded',
    {
      to: [
        {
          email: 'someone.with.a.long.address@subdomain.example.com',
          name: 'A Very Long Display Name That Goes On And On',
        },
      ],
      text: 't',
    },
  ],
  ['a long subject folded', { subject: 'Your order '.repeat(30).trim(), text: 't', html: 'h' }],
  [
    'a subject with symbols',
    { subject: "50% off: today's <deals> & more! #1 (really) [x] {y} ~z", text: 't' },
  ],
  ['a subject with spaces around it', { subject: '  padded subject  ', text: 't' }],
  ['another date', { date: new Date('1999-12-31T23:59:59.999Z'), text: 't' }],
  ['another Message-ID', { messageId: '<x@y>', html: '<p>h</p>', text: 't' }],
];

/** Inputs the fast path leaves to the tree. */
const other: Array<[string, Partial<ComposeInput>]> = [
  ['no part', {}],
  ['empty parts', { text: '', html: '' }],
  ['an AMP part', { text: 't', amp: '<html ⚡4email></html>', html: 'h' }],
  [
    'an attachment',
    {
      text: 't',
      attachments: [{ data: 'eA==', base64: true, content_type: 'text/plain', file_name: 'x.txt' }],
    },
  ],
  ['a custom header', { text: 't', headers: { 'X-Campaign': 'spring' } }],
  ['Cc', { text: 't', cc: [{ email: 'cc@example.net' }] }],
  ['Reply-To', { text: 't', replyTo: { email: 'r@example.net' } }],
  ['two recipients', { text: 't', to: [{ email: 'a@example.net' }, { email: 'b@example.net' }] }],
  ['a quoted name', { text: 't', from: { email: 'a@b.example', name: 'Shop, Inc.' } }],
  ['a unicode name', { text: 't', to: [{ email: 'a@b.example', name: 'Änn' }] }],
  ['an upper-case host', { text: 't', to: [{ email: 'a@Example.NET' }] }],
  ['an IDN host', { text: 't', to: [{ email: 'a@bücher.example' }] }],
  ['a numeric host', { text: 't', to: [{ email: 'a@1.2.3.04' }] }],
  ['a quoted local part', { text: 't', to: [{ email: '"a b"@example.net' }] }],
  ['a unicode subject', { text: 't', subject: 'Grüße' }],
  ['a quote in the subject', { text: 't', subject: 'say "hi"' }],
  ['an encoded word in the subject', { text: 't', subject: '=?utf-8?q?hi?=' }],
  ['an empty subject', { text: 't', subject: '' }],
  ['a blank subject', { text: 't', subject: '   ' }],
  ['a subject without spaces', { text: 't', subject: 'y'.repeat(1500) }],
  ['a tab in the subject', { text: 't', subject: 'a\tb' }],
];

describe('simpleMime', () => {
  it.each(simple)('writes the bytes of Nodemailer build() for %s', async (_name, overrides) => {
    const input = { ...base, ...overrides };
    const direct = simpleMime(input, baseBoundary(input.messageId));
    if (!direct) throw new Error('expected the fast path to take the message');
    const reference = await nodemailerBytes(input);
    expect(direct.toString('latin1')).toBe(reference.toString('latin1'));
    await expect(composeMime(input)).resolves.toEqual(reference);
  });

  it.each(other)('leaves %s to the tree', async (_name, overrides) => {
    const input = { ...base, ...overrides };
    expect(simpleMime(input, baseBoundary(input.messageId))).toBeNull();
    const composed = await composeMime(input).catch((error: unknown) => error);
    if (Buffer.isBuffer(composed)) expect(composed).toEqual(await nodemailerBytes(input));
  });

  it('writes the bytes of Nodemailer build() for a send’s messages, one recipient after another', async () => {
    // A send's messages share their texts: the encoded ones are reused from the first.
    const names = [undefined, 'Alex', 'Alex Example', 'A_1'];
    for (let index = 0; index < 40; index++) {
      const input: ComposeInput = {
        ...base,
        messageId: `<0190a7e2-5c1e-7b3a-9f00-${String(index).padStart(12, '0')}@shop.example.com>`,
        to: [{ email: `r${index}.x@inbox${index % 3}.example.net`, name: names[index % 4] }],
        text: paragraphs.join('\n\n'),
        html: `<p>${paragraphs[0]}</p><img src="https://t.example/o/${'k'.repeat(index)}">`,
      };
      const direct = simpleMime(input, baseBoundary(input.messageId));
      expect(direct?.equals(await nodemailerBytes(input))).toBe(true);
    }
  });

  it('writes the bytes of Nodemailer build() for random messages it takes (seeded)', async () => {
    let state = 12_345;
    const random = () => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
      return state / 2_147_483_648;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const text = (pieces: readonly string[], max: number) =>
      Array.from({ length: Math.floor(random() * max) }, () => pick(pieces)).join('');
    const nameChars = [...'abcXYZ019_ '];
    const subjectChars = [..." !#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~"];
    const bodyPieces = [
      ...'abc XYZ 019 .,;=?\t\r\n\n',
      'é',
      '世',
      '🎉',
      '\u0007',
      'From ',
      'x'.repeat(80),
    ];
    const email = () =>
      `${text([...'abcdef'], 6) || 'a'}${pick(['', '.x', '+t', '_-'])}@${pick(['inbox.example.net', 'a.b', 'x-y.example.org'])}`;
    let taken = 0;
    for (let index = 0; index < 600; index++) {
      const input: ComposeInput = {
        ...base,
        messageId: `<${index}.${text([...'abc0123-'], 30)}@example.com>`,
        date: new Date(Math.floor(random() * 4e12)),
        from: { email: email(), ...(random() < 0.7 ? { name: text(nameChars, 60) } : {}) },
        to: [{ email: email(), ...(random() < 0.5 ? { name: text(nameChars, 90) } : {}) }],
        subject: text(subjectChars, random() < 0.2 ? 400 : 70),
        ...(random() < 0.8 ? { text: text(bodyPieces, random() < 0.3 ? 3000 : 200) } : {}),
        ...(random() < 0.8 ? { html: text(bodyPieces, random() < 0.3 ? 3000 : 200) } : {}),
      };
      const direct = simpleMime(input, baseBoundary(input.messageId));
      if (!direct) continue;
      taken++;
      expect(direct.toString('latin1')).toBe((await nodemailerBytes(input)).toString('latin1'));
    }
    // Most of them are messages it takes (the others: no part, a blank or overlong subject).
    expect(taken).toBeGreaterThan(300);
  }, 30_000);
});
