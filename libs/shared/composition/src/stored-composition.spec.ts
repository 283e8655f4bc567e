import { HtmlTracker } from './html-tracker';
import {
  type RecipientPart,
  renderFor,
  type SendSources,
  StoredComposer,
} from './stored-composition';

const tracker = new HtmlTracker({
  TRACKING_SECRET: 'a-tracking-secret-of-at-least-32-bytes!',
  TRACKING_BASE_URL: 'https://track.example.test/',
});
const composer = new StoredComposer(tracker);

const send: SendSources = {
  kind: 'message',
  acceptedAt: new Date('2026-03-04T05:06:07Z'),
  from: { email: 'news@example.com', name: 'News' },
  templates: {
    subject: 'Hi {{ name }}',
    text: 'Hello {{ name }}',
    html: '<a href="https://example.com/{{ path }}">go</a></body>',
  },
  headers: { 'X-Campaign': 'spring', 'A-Second': 'kept in order' },
  substitutions: { name: 'friend', path: 'home' },
  templated: true,
  attachments: [{ data: 'aGVsbG8=', base64: true, content_type: 'text/plain', file_name: 'a.txt' }],
};

const part: RecipientPart = {
  id: '0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c',
  messageIdHeader: '<0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c@example.com>',
  recipient: { email: 'ann@example.net', name: 'Ann' },
  substitutions: { name: 'Ann', path: 'ann' },
  tracking: { opens: true, clicks: true },
};

describe('StoredComposer', () => {
  it('composes a stored message to the same bytes every time', async () => {
    const first = await composer.compose(send, part);
    const second = await composer.compose(structuredClone(send), structuredClone(part));
    expect(second.equals(first)).toBe(true);
    const raw = first.toString('utf8');
    expect(raw).toContain('Subject: Hi Ann');
    expect(raw).toContain('To: Ann <ann@example.net>');
    expect(raw).toContain(`Message-ID: ${part.messageIdHeader}`);
    expect(raw).toContain('Date: Wed, 04 Mar 2026 05:06:07 +0000');
    expect(raw.indexOf('X-Campaign')).toBeLessThan(raw.indexOf('A-Second'));
  });

  it("renders the recipient's substitutions over the global ones and tracks their links", () => {
    expect(renderFor(send, part).subject).toBe('Hi Ann');
    expect(renderFor(send, { ...part, substitutions: {} }).subject).toBe('Hi friend');
    const { links, input } = composer.prepare(send, part);
    expect(links).toEqual([{ index: 0, url: 'https://example.com/ann' }]);
    expect(input.html).toContain('https://track.example.test/t/c/');
    expect(input.html).toContain('https://track.example.test/t/o/');
  });

  it('sends content that is not a template as it is', () => {
    const plain = { ...send, templated: false };
    expect(renderFor(plain, part)).toBe(plain.templates);
  });

  it('addresses a conversation to its To and Cc', () => {
    const conversation: SendSources = {
      ...send,
      kind: 'conversation',
      templated: false,
      to: [{ email: 'a@example.net' }, { email: 'b@example.net', name: 'B' }],
      cc: [{ email: 'c@example.net' }],
    };
    const { input } = composer.prepare(conversation, part);
    expect(input.to).toEqual(conversation.to);
    expect(input.cc).toEqual(conversation.cc);
  });
});
