import { sampleRecipient, sampleRoutingPayload } from './sample-routing';

describe('sample message.routing', () => {
  it.each([
    ['', null, 'support@example.com'],
    ['ticket-*', null, 'ticket-sample@example.com'],
    ['support@a.example', 'a.example', 'support@a.example'],
    ['*@a.example', 'a.example', 'sample@a.example'],
  ])('%j goes to an address the pattern takes', (recipient, domainName, expected) => {
    expect(sampleRecipient({ recipient, domainName })).toBe(expected);
  });

  it('carries the route id, a nanosecond timestamp and every data field', () => {
    const payload = sampleRoutingPayload(
      { id: 'r-1', recipient: 'support', domainName: null },
      new Date('2026-05-06T13:15:46.404Z'),
    );
    expect(payload).toMatchObject({
      type: 'message.routing',
      route_id: 'r-1',
      timestamp: '2026-05-06T13:15:46.404000000Z',
    });
    expect(Object.keys(payload.data).sort()).toEqual(
      [
        'id',
        'from',
        'reply_to',
        'to',
        'subject',
        'message_id',
        'size',
        'spam_score',
        'bounce',
        'cc',
        'date',
        'in_reply_to',
        'references',
        'auto_submitted',
        'html_body',
        'plain_body',
        'reply_from_plain_body',
        'attachments',
        'headers',
      ].sort(),
    );
    expect(payload.data.date).toBe('Wed, 06 May 2026 13:15:46 +0000');
  });
});
