import type { DeliveryView } from '@envoi/contracts-messages';
import { simpleParser } from 'mailparser';

import { HtmlTracker } from './html-tracker';
import {
  fromSourcesRecord,
  recipientPartOfView,
  toRecipientPartRecord,
  toSourcesRecord,
} from './sources-record';
import { type RecipientPart, type SendSources, StoredComposer } from './stored-composition';

const composer = new StoredComposer(
  new HtmlTracker({
    TRACKING_SECRET: 'a-tracking-secret-of-at-least-32-bytes!',
    TRACKING_BASE_URL: 'https://track.example.test',
  }),
);

const send: SendSources = {
  kind: 'message',
  acceptedAt: new Date('2026-03-04T05:06:07.089Z'),
  from: { email: 'news@example.com', name: 'News' },
  replyTo: { email: 'help@example.com' },
  templates: {
    subject: 'Hi {{ name }}',
    text: 'Hello {{ name }}',
    html: '<p><a href="https://example.com/{{ path }}">go</a></p></body>',
  },
  headers: { 'X-Campaign': 'spring' },
  substitutions: { name: 'friend', path: 'home' },
  templated: true,
  attachments: [{ data: 'aGVsbG8=', base64: true, content_type: 'text/plain', file_name: 'a.txt' }],
};

const part: RecipientPart = {
  id: '0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c',
  messageIdHeader: '<0190a7e2-5c1e-7b3a-9f00-8d2c4e6a1b2c@example.com>',
  recipient: { email: 'ann@example.net', name: 'Ann' },
  substitutions: { name: 'Ann', path: 'ann' },
  tracking: { opens: true, clicks: false },
};

/** The view fields a recipient part reads (the rest does not matter to composition). */
const view = {
  id: part.id,
  message_id_header: part.messageIdHeader,
  tracking: { open: true, click: false },
} as DeliveryView;

/** Through JSON, as a reply carries it. */
const carried = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('sources and recipient part records', () => {
  it('give back the same sources and part after travelling as JSON', () => {
    expect(fromSourcesRecord(carried(toSourcesRecord(send)))).toEqual(send);
    const record = carried(toRecipientPartRecord('send-1', part));
    expect(record.send_id).toBe('send-1');
    expect(recipientPartOfView(view, record)).toEqual(part);
  });

  it('compose to the very bytes the sources and part give where they were read', async () => {
    const here = await composer.compose(send, part);
    const there = await composer.compose(
      fromSourcesRecord(carried(toSourcesRecord(send))),
      recipientPartOfView(view, carried(toRecipientPartRecord('send-1', part))),
    );

    expect(there.equals(here)).toBe(true);
    const { html } = await simpleParser(there);
    expect(html).toContain('https://example.com/ann');
    expect(html).toContain('https://track.example.test/t/o/');
  });

  it('leave out what a send or part does not have', () => {
    const without: SendSources = {
      kind: 'message',
      acceptedAt: send.acceptedAt,
      from: send.from,
      templates: { subject: 'Hi' },
      headers: {},
      templated: false,
      attachments: [],
    };
    const record = toSourcesRecord(without);

    expect(record).not.toHaveProperty('reply_to');
    expect(record).not.toHaveProperty('substitutions');
    expect(fromSourcesRecord(carried(record))).toEqual(without);
    expect(toRecipientPartRecord('s', { ...part, substitutions: undefined })).toEqual({
      send_id: 's',
      recipient: part.recipient,
    });
  });
});
