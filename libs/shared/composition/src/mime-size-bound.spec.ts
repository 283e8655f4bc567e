import { randomBytes } from 'node:crypto';

import { ContentRuleError } from './header-rules';
import { type ComposeInput, composeMime } from './mime';
import { composedSizeUpperBound } from './mime-size-bound';

const BASE: ComposeInput = {
  messageId: '<0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c@example.com>',
  date: new Date('2026-01-02T03:04:05Z'),
  from: { email: 'news@example.com', name: 'Example News' },
  to: [{ email: 'ann@example.net' }],
  ...{ subject: 'Hello', text: 'Hello Ann', attachments: [], headers: {} },
};

const input = (overrides: Partial<ComposeInput> = {}): ComposeInput => ({ ...BASE, ...overrides });

const longLine = 'word '.repeat(400);
const nonAscii = 'Grüße, Ærøskøbing — 日本語のテキスト ✉ '.repeat(30);

describe('composedSizeUpperBound', () => {
  it.each<[string, Partial<ComposeInput>]>([
    ['a short text', {}],
    ['text, HTML and AMP', { html: `<p>${longLine}</p>`, amp: '<html ⚡4email></html>' }],
    ['non-ASCII everywhere', { subject: 'Grüße ✉ 日本', text: nonAscii, html: nonAscii }],
    ['only line breaks (each lone LF becomes CRLF)', { text: '\n'.repeat(5_000) }],
    ['one very long line', { text: 'x'.repeat(20_000) }],
    [
      'names, cc, reply-to and custom headers at the longest shown safe',
      {
        from: { email: 'news@example.com', name: 'É'.repeat(75) },
        to: [{ email: 'ann@example.net', name: 'Ä'.repeat(75) }],
        cc: Array.from({ length: 50 }, (_, index) => ({
          email: `c${index}@example.net`,
          name: 'ö'.repeat(75),
        })),
        replyTo: { email: 'reply@example.com', name: '"quoted" name' },
        subject: 'ü'.repeat(75),
        headers: { 'X-Campaign': 'ß'.repeat(75), References: '<a@example.com> <b@example.com>' },
      },
    ],
    [
      'binary, text and inline attachments',
      {
        html: '<img src="cid:logo">',
        attachments: [
          {
            data: randomBytes(30_000).toString('base64'),
            base64: true,
            content_type: 'application/pdf',
            file_name: 'invoice.pdf',
          },
          {
            data: 'é\n'.repeat(10_000),
            base64: false,
            content_type: 'text/plain',
            file_name: 'notes.txt',
          },
          {
            data: randomBytes(100).toString('base64'),
            base64: true,
            content_type: 'image/png',
            file_name: 'logo.png',
            content_id: 'logo',
          },
        ],
      },
    ],
  ])('is at least the composed size: %s', async (_, overrides) => {
    const given = input(overrides);
    const bound = composedSizeUpperBound(given);
    expect(bound).toBeDefined();
    expect(bound).toBeGreaterThanOrEqual((await composeMime(given)).length);
  });

  it('stays within a few times the content for an ordinary message', () => {
    const text = 'Thank you for your order. '.repeat(40);
    const bound = composedSizeUpperBound(input({ text, html: `<p>${text}</p>` }));
    expect(bound).toBeLessThan(20_000);
  });

  it.each<[string, Partial<ComposeInput>]>([
    ['a long subject', { subject: 'a'.repeat(151) }],
    ['a long display name', { to: [{ email: 'ann@example.net', name: 'n'.repeat(151) }] }],
    ['a long custom header value', { headers: { 'X-Long': 'v'.repeat(151) } }],
    [
      'a message/rfc822 attachment (written as it is)',
      {
        attachments: [
          {
            data: 'Subject: hi\r\n\r\nbody',
            base64: false,
            content_type: 'message/rfc822',
            file_name: 'forwarded.eml',
          },
        ],
      },
    ],
  ])('has no bound (compose to know) for %s', (_, overrides) => {
    expect(composedSizeUpperBound(input(overrides))).toBeUndefined();
  });

  it('refuses header-bound values as composeMime does', async () => {
    const unsafe = input({ subject: 'Hello\r\nBcc: victim@example.org' });
    expect(() => composedSizeUpperBound(unsafe)).toThrow(ContentRuleError);
    await expect(composeMime(unsafe)).rejects.toThrow(ContentRuleError);
  });
});
