import { MESSAGE_MAX_BYTES } from '@envoi/contracts-messages';
import { type ComposeInput, composeMime } from '@envoi/shared-composition';

import { composedSizeBound, type SizeParts } from './size-bound';

const ID = '0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c';

function input(overrides: Partial<ComposeInput>): ComposeInput {
  return {
    messageId: `<${ID}@example.com>`,
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

function partsOf(message: ComposeInput): SizeParts {
  return {
    to: message.to,
    ...(message.cc ? { cc: message.cc } : {}),
    content: {
      subject: message.subject,
      ...(message.text !== undefined ? { text: message.text } : {}),
      ...(message.html !== undefined ? { html: message.html } : {}),
      ...(message.amp !== undefined ? { amp: message.amp } : {}),
    },
    trackedHtmlBytes: message.html === undefined ? 0 : Buffer.byteLength(message.html, 'utf8'),
  };
}

async function boundAndSize(given: ComposeInput, other: ComposeInput) {
  const size = (await composeMime(given)).length;
  return {
    bound: composedSizeBound(size, partsOf(given), partsOf(other)),
    size: (await composeMime(other)).length,
  };
}

describe('composedSizeBound', () => {
  it('is the size itself when only the message id differs', async () => {
    const given = input({ html: '<p>Hi</p>' });
    const size = (await composeMime(given)).length;
    expect(composedSizeBound(size, partsOf(given), partsOf(given))).toBe(size);
  });

  it.each<[string, Partial<ComposeInput>, Partial<ComposeInput>]>([
    ['a longer ASCII address', {}, { to: [{ email: 'a-much-longer-address@example.net' }] }],
    [
      'a non-ASCII display name (encoded word)',
      {},
      { to: [{ email: 'zoe@example.net', name: 'Zoë 😀 '.repeat(30) }] },
    ],
    ['a subject that must be encoded', {}, { subject: 'é😀'.repeat(400) }],
    ['a text that turns quoted-printable', {}, { text: '=é\n'.repeat(5000) }],
    ['a text part that appears', { text: '' }, { text: 'now there is text', html: '<p>x</p>' }],
    ['an HTML part that appears', {}, { html: '<p>€</p>'.repeat(1000) }],
    ['a much shorter text', { text: 'x'.repeat(100_000) }, { text: 'short' }],
  ])('bounds the size of a message with %s', async (_, givenChanges, otherChanges) => {
    const { bound, size } = await boundAndSize(input(givenChanges), input(otherChanges));
    expect(size).toBeLessThanOrEqual(bound);
  });

  it('stays close for a send whose messages differ in their recipient only', async () => {
    const attachment = { data: 'x'.repeat(1_000_000), content_type: 'text/plain', file_name: 'a' };
    const { bound, size } = await boundAndSize(
      input({ attachments: [attachment] }),
      input({ attachments: [attachment], to: [{ email: 'bob@example.org', name: 'Bob' }] }),
    );
    expect(bound - size).toBeLessThan(2048);
    expect(bound).toBeLessThan(MESSAGE_MAX_BYTES);
  });
});
