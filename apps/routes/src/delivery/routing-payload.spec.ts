import { InboundMessageRejected } from '@envoi/shared-inbound-mail';

import type { RouteCallTarget } from './route-deliveries.repository';
import { routingPayload } from './routing-payload';

const RAW = Buffer.from(
  [
    'From: "Customer" <customer@example.net>',
    'To: support@example.com',
    'Subject: Re: Help',
    'Message-ID: <m1@example.net>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Thanks, that fixed it.',
    '',
    'On Mon, 6 May 2024 at 13:15, Support <support@example.com> wrote:',
    '> Try turning it off and on again.',
    '--b',
    'Content-Type: image/png',
    'Content-Disposition: inline; filename="logo.png"',
    'Content-ID: <logo%40123>',
    'Content-Transfer-Encoding: base64',
    '',
    'iVBORw0KGgo=',
    '--b--',
    '',
  ].join('\r\n'),
);

const ROUTE: RouteCallTarget = {
  id: 'route-1',
  url: 'https://example.com/inbound',
  secretCiphertext: '',
  attachments: false,
  headers: false,
  stripReplies: false,
};

const NOW = new Date('2026-11-25T10:00:00.123Z');

describe('routingPayload', () => {
  it('is the message.routing of the call: its recipient as `to`, flags off', async () => {
    const call = { inboundId: 'in-1', raw: RAW, recipients: ['ticket-1@example.com'] };
    const payload = await routingPayload(call, ROUTE, NOW);
    expect(payload).toMatchObject({
      type: 'message.routing',
      route_id: 'route-1',
      timestamp: '2026-11-25T10:00:00.123000000Z',
      data: {
        id: 'in-1',
        to: 'ticket-1@example.com',
        subject: 'Re: Help',
        size: RAW.length,
        reply_from_plain_body: '',
        attachments: [],
      },
    });
    expect(payload.data).not.toHaveProperty('headers');
  });

  it('names the first recipient of a grouped call and honours the route flags', async () => {
    const call = { inboundId: 'in-1', raw: RAW, recipients: ['a@example.com', 'b@example.com'] };
    const route = { ...ROUTE, attachments: true, headers: true, stripReplies: true };
    const { data } = await routingPayload(call, route, NOW);
    expect(data.to).toBe('a@example.com');
    expect(data.reply_from_plain_body).toBe('Thanks, that fixed it.');
    expect(data.attachments).toEqual([
      expect.objectContaining({ filename: 'logo.png', content_id: 'logo@123' }),
    ]);
    expect(data.headers).toMatchObject({ Subject: 'Re: Help' });
  });

  it('rejects a message the inbound-mail library refuses', async () => {
    const nested = Array.from({ length: 40 }, (_, depth) =>
      [`Content-Type: multipart/mixed; boundary="b${depth}"`, '', `--b${depth}`].join('\r\n'),
    ).join('\r\n');
    const bomb = Buffer.from(
      `From: x@example.net\r\nSubject: bomb\r\nMIME-Version: 1.0\r\n${nested}\r\n`,
    );
    const call = { inboundId: 'in-2', raw: bomb, recipients: ['a@example.com'] };
    await expect(routingPayload(call, ROUTE, NOW)).rejects.toBeInstanceOf(InboundMessageRejected);
  });
});
