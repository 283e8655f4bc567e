import type { RouteOptions } from '@envoi/contracts-routes';

import { mailFixture } from './__fixtures__/read-fixture';
import { parseInboundMessage } from './parse-inbound-message';
import { routingContentId, routingData, routingDisposition, routingHeaders } from './routing-data';

const NO_OPTIONS: RouteOptions = {
  attachments: false,
  headers: false,
  group_by_message_id: false,
  strip_replies: false,
};
const ALL_OPTIONS: RouteOptions = {
  attachments: true,
  headers: true,
  group_by_message_id: false,
  strip_replies: true,
};

describe('routingData', () => {
  it('fills every data field of a Gmail-shaped reply (notes 2.8)', async () => {
    const raw = mailFixture('gmail-reply');
    const parsed = await parseInboundMessage(raw);

    const data = routingData(
      parsed,
      { id: 'in-1', size: raw.length, recipient: 'ticket-42@yourdomain.test' },
      NO_OPTIONS,
    );

    expect(data).toEqual({
      id: 'in-1',
      from: 'Maria Lopez <maria@example.com>',
      reply_to: 'maria@example.com',
      to: 'ticket-42@yourdomain.test',
      subject: 'Re: Help with my account ✓',
      message_id: '<CAB1234@mail.example.com>',
      size: raw.length,
      spam_score: 0,
      bounce: false,
      cc: 'carlos@example.com, team@example.com',
      date: 'Mon, 6 May 2024 13:15:46 +0000',
      in_reply_to: '<ticket-42@yourdomain.test>',
      references: '<ticket-41@yourdomain.test> <ticket-42@yourdomain.test>',
      auto_submitted: '',
      html_body: '<p>Thanks, that fixed it.</p><img src="cid:logo+1%40mail">',
      plain_body: parsed.text,
      reply_from_plain_body: '',
      attachments: [],
    });
    expect(data).not.toHaveProperty('headers');
  });

  it('adds attachments (inline cid parts too), headers and the stripped reply when the route asks', async () => {
    const raw = mailFixture('gmail-reply');
    const parsed = await parseInboundMessage(raw);

    const data = routingData(parsed, { id: 'in-1', size: raw.length }, ALL_OPTIONS);

    expect(data.reply_from_plain_body).toBe('Thanks, that fixed it.');
    expect(data.to).toBe('support@yourdomain.test, ticket-42@yourdomain.test');
    expect(data.attachments).toEqual([
      {
        filename: 'logo.png',
        content_type: 'image/png',
        content_id: 'logo 1@mail',
        disposition: '',
        data: 'iVBORw0KGgo=',
      },
      {
        filename: 'invoice.pdf',
        content_type: 'application/pdf',
        content_id: '',
        disposition: 'attachment',
        data: 'JVBERi0xLjQK',
      },
    ]);
    expect(data.headers).toMatchObject({
      'X-Mailer': 'Gmail',
      'Message-ID': '<CAB1234@mail.example.com>',
      Received: expect.stringMatching(
        /^from mail-a\.example\.com .*\nby mail-a\.example\.com/s,
      ) as unknown,
    });
  });

  it('flags a DSN as a bounce and keeps its Auto-Submitted value', async () => {
    const raw = mailFixture('postfix-dsn');

    const data = routingData(
      await parseInboundMessage(raw),
      { id: 'in-2', size: raw.length, sender: '' },
      NO_OPTIONS,
    );

    expect(data.bounce).toBe(true);
    expect(data.auto_submitted).toBe('auto-replied');
    expect(data.from).toBe('Mail Delivery System <MAILER-DAEMON@mail.example.net>');
  });

  it('scores an unauthenticated HTML-only shout with an IP link as suspect', async () => {
    const raw = mailFixture('spam');

    const data = routingData(
      await parseInboundMessage(raw),
      { id: 'in-3', size: raw.length },
      NO_OPTIONS,
    );

    expect(data.spam_score).toBeGreaterThan(5);
    expect(data.bounce).toBe(false);
  });
});

describe('routing field helpers', () => {
  it.each([
    ['<a+b%40x>', 'a b@x'],
    ['  <logo-123> ', 'logo-123'],
    ['<bad%zz>', 'bad%zz'],
    ['', ''],
  ])('content id %p → %p', (raw, expected) => {
    expect(routingContentId(raw)).toBe(expected);
  });

  it.each([
    ['Inline; filename="a.png"', 'inline'],
    [' FORM-DATA ', 'form-data'],
    ['', ''],
  ])('disposition %p → %p', (raw, expected) => {
    expect(routingDisposition(raw)).toBe(expected);
  });

  it('joins repeated header fields in order under the first spelling of the name', () => {
    const headers = routingHeaders({
      headers: [
        { name: 'Received', value: 'one' },
        { name: 'X-Priority', value: '3' },
        { name: 'received', value: 'two' },
      ],
    });

    expect(headers).toEqual({ Received: 'one\ntwo', 'X-Priority': '3' });
  });
});
