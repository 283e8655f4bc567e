import { routingData } from './routing-data';

const RAW = Buffer.from(
  [
    'From: "Customer" <customer@example.net>',
    'To: support@example.com',
    'Cc: a@example.com, b@example.com',
    'Subject: Help',
    'Message-ID: <m1@example.net>',
    'In-Reply-To: <m0@example.com>',
    'References: <m0@example.com>',
    'Date: Mon, 06 May 2024 13:15:46 +0000',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'I need help.',
    '--b',
    'Content-Type: image/png',
    'Content-Disposition: Inline; filename="logo.png"',
    'Content-ID: <logo%40123>',
    'Content-Transfer-Encoding: base64',
    '',
    'iVBORw0KGgo=',
    '--b--',
    '',
  ].join('\r\n'),
);

describe('routingData', () => {
  it('fills every data field of webhooks.yaml, attachments and headers only when asked', async () => {
    const data = await routingData('in-1', RAW, {
      attachments: false,
      headers: false,
      strip_replies: false,
    });
    expect(data).toMatchObject({
      id: 'in-1',
      from: '"Customer" <customer@example.net>',
      reply_to: 'customer@example.net',
      to: 'support@example.com',
      subject: 'Help',
      message_id: '<m1@example.net>',
      size: RAW.length,
      spam_score: 0,
      bounce: false,
      cc: 'a@example.com, b@example.com',
      date: 'Mon, 06 May 2024 13:15:46 +0000',
      in_reply_to: '<m0@example.com>',
      references: '<m0@example.com>',
      auto_submitted: '',
      plain_body: 'I need help.',
      reply_from_plain_body: '',
      attachments: [],
    });
    expect(data).not.toHaveProperty('headers');
  });

  it('adds the attachments (cid unwrapped and decoded, disposition lowercased) and headers', async () => {
    const data = await routingData('in-1', RAW, {
      attachments: true,
      headers: true,
      strip_replies: true,
    });
    expect(data.attachments).toEqual([
      {
        filename: 'logo.png',
        content_type: 'image/png',
        content_id: 'logo@123',
        disposition: 'inline',
        data: Buffer.from('iVBORw0KGgo=', 'base64').toString('base64'),
      },
    ]);
    expect(data.headers).toMatchObject({ Subject: 'Help', To: 'support@example.com' });
    expect(data.reply_from_plain_body).toBe('I need help.');
  });
});
