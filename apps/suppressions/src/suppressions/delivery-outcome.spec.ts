import { REASON_MAX } from '@envoi/contracts-suppressions';
import { UnprocessableMessageError } from '@envoi/shared-nats';

import { toSuppressionDecision } from './delivery-outcome';

const ACCOUNT_ID = '5f0c6f7e-1d2b-4c3a-9e8f-0a1b2c3d4e5f';

function event(overrides: Record<string, unknown> = {}, data: Record<string, unknown> = {}) {
  const base = {
    id: 'event-1',
    type: 'message.bounced',
    timestamp: '2030-01-01T00:00:01Z',
    data: {
      account_id: ACCOUNT_ID,
      event: 'on_bounced',
      from: 'Hello@Sender.TEST',
      recipient: ' To@Recipient.test ',
      subject: 'Hi',
      message_id_header: '<0190f5c2-6c1e-7a3b-8c4d-1234567890ab@sender.test>',
      id: '0190f5c2-6c1e-7a3b-8c4d-1234567890ab',
      status: 'Bounced',
      attempt: {
        time: '2030-01-01T00:00:00Z',
        remote_host: 'mx.recipient.test',
        reply: '550 5.1.1 no such user',
        status: 'Bounced',
        attempt: 1,
      },
      bounce_classification: 'hard',
      sandbox: false,
    },
  };
  return { ...base, ...overrides, data: { ...base.data, ...data } };
}

describe('toSuppressionDecision', () => {
  it('suppresses the recipient of a hard bounce for the sending domain', () => {
    expect(toSuppressionDecision(event())).toEqual({
      eventId: 'event-1',
      suppression: {
        accountId: ACCOUNT_ID,
        email: 'to@recipient.test',
        domain: 'sender.test',
        reason: 'Hard bounce (mx.recipient.test): 550 5.1.1 no such user',
      },
    });
  });

  it('suppresses the recipient of a permanent failure', () => {
    const decision = toSuppressionDecision(
      event(
        { type: 'message.failed' },
        {
          status: 'Failed',
          bounce_classification: undefined,
          attempt: { remote_host: '', reply: '421 4.7.0 try again later', attempt: 7 },
        },
      ),
    );

    expect(decision.suppression).toMatchObject({
      email: 'to@recipient.test',
      reason: 'Repeated delivery failures: 421 4.7.0 try again later',
    });
  });

  it.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['a soft bounce', {}, { bounce_classification: 'soft' }],
    ['a bounce without a classification', {}, { bounce_classification: undefined }],
    ['a sandbox hard bounce', {}, { status: 'Sandbox Bounced', sandbox: true }],
    ['a sandbox-flagged bounce', {}, { sandbox: true }],
    ['an expiry', { type: 'message.failed' }, { status: 'Expired' }],
    [
      'a failure of the first attempt (the sender side)',
      { type: 'message.failed' },
      {
        status: 'Failed',
        attempt: { remote_host: '', reply: 'the message content was purged', attempt: 1 },
      },
    ],
    ['a sandbox failure', { type: 'message.failed' }, { status: 'Sandbox Failed', sandbox: true }],
  ])('suppresses nothing for %s', (_what, overrides, data) => {
    expect(toSuppressionDecision(event(overrides, data))).toEqual({
      eventId: 'event-1',
      suppression: null,
    });
  });

  it('keeps the reason within the column', () => {
    const decision = toSuppressionDecision(
      event({}, { attempt: { remote_host: 'mx', reply: 'x'.repeat(1_000), attempt: 1 } }),
    );

    expect(decision.suppression?.reason).toHaveLength(REASON_MAX);
  });

  it.each<[string, unknown]>([
    ['not an object', null],
    ['no id', event({ id: 42 })],
    ['a delivery', event({ type: 'message.delivered' })],
    ['no account', event({}, { account_id: 'nope' })],
    ['no sandbox flag', event({}, { sandbox: undefined })],
    ['no attempt number', event({}, { attempt: { remote_host: '', reply: '' } })],
    ['a recipient that is no address', event({}, { recipient: 'nobody' })],
    ['a sender without a domain', event({}, { from: 'nobody' })],
  ])('refuses %s as unprocessable', (_what, value) => {
    expect(() => toSuppressionDecision(value)).toThrow(UnprocessableMessageError);
  });
});
