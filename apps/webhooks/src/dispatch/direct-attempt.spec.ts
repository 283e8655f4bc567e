import { DirectAttempt } from './direct-attempt';

describe('DirectAttempt', () => {
  it('is queued as an unleased delivery without attempts, with what its call needs', () => {
    const attempt = new DirectAttempt({
      id: 'delivery',
      webhookId: 'hook',
      accountId: 'account',
      eventId: 'event',
      eventType: 'message.delivered',
      body: '{}',
      url: 'https://hook.example/hook',
      secretCiphertext: 'sealed',
    });

    expect(attempt.queued()).toEqual({
      id: 'delivery',
      webhookId: 'hook',
      eventId: 'event',
      eventType: 'message.delivered',
      body: '{}',
      attempts: 0,
      leaseToken: '',
      url: 'https://hook.example/hook',
      secretCiphertext: 'sealed',
      webhookFailing: false,
    });
  });
});
