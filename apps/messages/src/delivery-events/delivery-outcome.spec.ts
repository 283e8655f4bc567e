import type { DeliveryOutcomeEvent } from '@envoi/contracts-delivery';
import { UnprocessableMessageError } from '@envoi/shared-nats';

import { toDeliveryOutcome, toDeliveryOutcomes } from './delivery-outcome';

const MESSAGE_ID = '0190f5c2-6c1e-7a3b-8c4d-1234567890ab';
const ACCOUNT_ID = '5f0c6f7e-1d2b-4c3a-9e8f-0a1b2c3d4e5f';

function event(overrides: Record<string, unknown> = {}, data: Record<string, unknown> = {}) {
  const base: DeliveryOutcomeEvent = {
    id: 'event-1',
    type: 'message.bounced',
    timestamp: '2030-01-01T00:00:01Z',
    data: {
      account_id: ACCOUNT_ID,
      event: 'on_bounced',
      from: 'hello@sender.test',
      recipient: 'to@recipient.test',
      subject: 'Hi',
      message_id_header: `<${MESSAGE_ID}@sender.test>`,
      id: MESSAGE_ID,
      is_bot: false,
      status: 'Bounced',
      attempt: {
        time: '2030-01-01T00:00:00.123456789Z',
        remote_host: 'mx.recipient.test',
        reply: '550 5.1.1 no such user\r\nsecond line',
        status: 'Bounced',
        attempt: 1,
      },
      bounce_classification: 'hard',
      sandbox: false,
      recipients: [
        {
          email: 'to@recipient.test',
          result: 'bounced',
          remote_host: 'mx.recipient.test',
          reply: '550 5.1.1 no such user',
          bounce_classification: 'hard',
        },
      ],
    },
  };
  return { ...base, ...overrides, data: { ...base.data, ...data } };
}

describe('toDeliveryOutcome', () => {
  it('reads what the status machine needs', () => {
    expect(toDeliveryOutcome(event())).toEqual({
      eventId: 'event-1',
      type: 'message.bounced',
      messageId: MESSAGE_ID,
      accountId: ACCOUNT_ID,
      reported: {
        status: 'Bounced',
        attempt: {
          time: new Date('2030-01-01T00:00:00.123Z'),
          remoteHost: 'mx.recipient.test',
          reply: '550 5.1.1 no such user second line',
          status: 'Bounced',
        },
        bounceClassification: 'hard',
      },
    });
  });

  it('accepts an expiry on a failed event and a sandbox outcome on its own event', () => {
    expect(
      toDeliveryOutcome(event({ type: 'message.failed' }, { status: 'Expired' })).reported.status,
    ).toBe('Expired');
    expect(
      toDeliveryOutcome(event({ type: 'message.transient_error' }, { status: 'Sandbox Deferred' }))
        .reported.status,
    ).toBe('Sandbox Deferred');
  });

  it.each<[string, unknown]>([
    ['not an object', 'text'],
    ['no id', event({ id: undefined })],
    ['an id too long', event({ id: 'x'.repeat(256) })],
    ['the reception event', event({ type: 'message.reception' })],
    ['a status its type never reports', event({ type: 'message.delivered' })],
    ['an unknown status', event({}, { status: 'Sent' })],
    ['a message id that is not a uuid', event({}, { id: 'nope' })],
    ['no attempt', event({}, { attempt: undefined })],
    [
      'an attempt time that is not RFC 3339',
      event({}, { attempt: { time: 'yesterday', remote_host: '', reply: '', status: 'Bounced' } }),
    ],
    ['an unknown classification', event({}, { bounce_classification: 'medium' })],
  ])('refuses %s as unprocessable', (_what, value) => {
    expect(() => toDeliveryOutcome(value)).toThrow(UnprocessableMessageError);
  });
});

describe('toDeliveryOutcomes', () => {
  const batch = (events: unknown[]) => ({
    id: 'batch-1',
    type: 'message.outcome_batch',
    timestamp: '2030-01-01T00:00:02Z',
    data: { events },
  });

  it("reads an outcome batch's events in order, each as if it came alone", () => {
    const bounced = event();
    const delivered = event(
      { id: 'event-2', type: 'message.delivered' },
      { event: 'on_delivered', status: 'Delivered', bounce_classification: undefined },
    );

    expect(toDeliveryOutcomes(batch([bounced, delivered]))).toEqual({
      events: [toDeliveryOutcome(bounced), toDeliveryOutcome(delivered)],
      unprocessable: [],
    });
  });

  it('reads any other message as its one event', () => {
    expect(toDeliveryOutcomes(event())).toEqual({
      events: [toDeliveryOutcome(event())],
      unprocessable: [],
    });
  });

  it('leaves out an event no retry can help, and keeps the others', () => {
    const decoded = toDeliveryOutcomes(batch([event({ id: '' }), event()]));

    expect(decoded.events).toEqual([toDeliveryOutcome(event())]);
    expect(decoded.unprocessable).toHaveLength(1);
  });

  it.each([
    ['a batch with no event', batch([])],
    ['a batch of malformed events', batch([event({ id: '' }), event({ type: 'message.opened' })])],
    ['a malformed lone event', event({ id: '' })],
  ])('refuses %s as unprocessable', (_case, message) => {
    expect(() => toDeliveryOutcomes(message)).toThrow(UnprocessableMessageError);
  });
});
