import { REASON_MAX } from '@envoi/contracts-suppressions';
import { UnprocessableMessageError } from '@envoi/shared-nats';

import {
  suppressesNothing,
  toSuppressionDecision,
  toSuppressionDecisions,
} from './delivery-outcome';

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

const attempt = (reply: string, number: number, status = 'Bounced') => ({
  time: '2030-01-01T00:00:00Z',
  remote_host: '',
  reply,
  status,
  attempt: number,
});

describe('toSuppressionDecision', () => {
  it('suppresses the recipient of a hard bounce for the sending domain', () => {
    expect(toSuppressionDecision(event())).toEqual({
      eventId: 'event-1',
      suppressions: [
        {
          accountId: ACCOUNT_ID,
          email: 'to@recipient.test',
          domain: 'sender.test',
          reason: 'Hard bounce (mx.recipient.test): 550 5.1.1 no such user',
        },
      ],
      unusable: [],
    });
  });

  it('suppresses only the recipients that bounced hard or failed, whatever the event', () => {
    const recipients = [
      { email: 'to@recipient.test', result: 'delivered', remote_host: 'mx', reply: '250 OK' },
      {
        email: 'CC@recipient.test',
        result: 'bounced',
        remote_host: 'mx',
        reply: '550 5.1.1 no such user',
        bounce_classification: 'hard',
      },
      {
        email: 'soft@recipient.test',
        result: 'bounced',
        remote_host: 'mx',
        reply: '552 5.2.2 mailbox full',
        bounce_classification: 'soft',
      },
      { email: 'bcc@other.test', result: 'failed', remote_host: '', reply: '451 later; giving up' },
    ];
    const delivered = event(
      { type: 'message.delivered' },
      {
        event: 'on_delivered',
        status: 'Delivered',
        bounce_classification: undefined,
        attempt: attempt('…', 4, 'Delivered'),
        recipients,
        failure_reason: 'retries_exhausted',
      },
    );

    const decision = toSuppressionDecision(delivered);

    expect(decision.suppressions.map((entry) => [entry.email, entry.reason])).toEqual([
      ['cc@recipient.test', 'Hard bounce (mx): 550 5.1.1 no such user'],
      ['bcc@other.test', 'Repeated delivery failures: 451 later; giving up'],
    ]);
    expect(decision.suppressions.every((entry) => entry.domain === 'sender.test')).toBe(true);
  });

  it('suppresses nothing for recipients that failed because the message expired', () => {
    const expired = event(
      { type: 'message.failed' },
      {
        event: 'on_failed',
        status: 'Failed',
        bounce_classification: undefined,
        attempt: attempt('expired before the next attempt', 3, 'Failed'),
        recipients: [{ email: 'a@recipient.test', result: 'failed', remote_host: '', reply: 'x' }],
        failure_reason: 'expired',
      },
    );

    expect(toSuppressionDecision(expired).suppressions).toEqual([]);
  });

  it('leaves out recipients that are no email address, and says so', () => {
    const decision = toSuppressionDecision(event({}, { recipient: 'nobody' }));

    expect(decision).toMatchObject({ suppressions: [], unusable: ['nobody'] });
  });

  it('suppresses the recipient of a permanent failure', () => {
    const decision = toSuppressionDecision(
      event(
        { type: 'message.failed' },
        {
          status: 'Failed',
          bounce_classification: undefined,
          attempt: attempt('421 4.7.0 try again later', 7, 'Failed'),
        },
      ),
    );

    expect(decision.suppressions[0]).toMatchObject({
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
      { status: 'Failed', attempt: attempt('the message content was purged', 1, 'Failed') },
    ],
    ['a sandbox failure', { type: 'message.failed' }, { status: 'Sandbox Failed', sandbox: true }],
  ])('suppresses nothing for %s', (_what, overrides, data) => {
    expect(toSuppressionDecision(event(overrides, data))).toEqual({
      eventId: 'event-1',
      suppressions: [],
      unusable: [],
    });
  });

  it('keeps the reason within the column', () => {
    const decision = toSuppressionDecision(event({}, { attempt: attempt('x'.repeat(1_000), 1) }));

    expect(decision.suppressions[0]?.reason).toHaveLength(REASON_MAX);
  });

  it.each<[string, unknown]>([
    ['not an object', null],
    ['no id', event({ id: 42 })],
    ['a delivery reporting a bounce', event({ type: 'message.delivered' })],
    ['the reception event', event({ type: 'message.reception' })],
    ['a malformed recipient outcome', event({}, { recipients: [{ email: 'a@b.test' }] })],
    ['no account', event({}, { account_id: 'nope' })],
    ['no sandbox flag', event({}, { sandbox: undefined })],
    ['no attempt number', event({}, { attempt: { remote_host: '', reply: '' } })],
    ['a sender without a domain', event({}, { from: 'nobody' })],
  ])('refuses %s as unprocessable', (_what, value) => {
    expect(() => toSuppressionDecision(value)).toThrow(UnprocessableMessageError);
  });
});

describe('suppressesNothing', () => {
  const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
  const recipient = (result: string, extra: Record<string, unknown> = {}) => ({
    email: 'to@recipient.test',
    result,
    remote_host: 'mx',
    reply: '250 OK',
    ...extra,
  });
  const delivered = (recipients: unknown[]) =>
    event(
      { type: 'message.delivered' },
      {
        event: 'on_delivered',
        status: 'Delivered',
        bounce_classification: undefined,
        attempt: attempt('250 OK', 1, 'Delivered'),
        recipients,
      },
    );

  it('passes deliveries and deferrals, which suppress nothing', () => {
    const events = [
      delivered([recipient('delivered')]),
      delivered([recipient('delivered'), recipient('transient_error')]),
    ];

    for (const value of events) {
      expect(toSuppressionDecision(value).suppressions).toEqual([]);
      expect(suppressesNothing(bytes(value))).toBe(true);
    }
  });

  it('takes every event that suppresses someone: a bounced or failed recipient, or a legacy type', () => {
    const suppressing = [
      event(),
      event(
        { type: 'message.failed' },
        {
          status: 'Failed',
          bounce_classification: undefined,
          attempt: attempt('421', 7, 'Failed'),
        },
      ),
      delivered([recipient('delivered'), recipient('bounced', { bounce_classification: 'hard' })]),
      {
        ...delivered([recipient('failed')]),
        data: {
          ...delivered([]).data,
          recipients: [recipient('failed')],
          failure_reason: 'retries_exhausted',
          attempt: attempt('421', 3, 'Delivered'),
        },
      },
    ];

    for (const value of suppressing) {
      expect(toSuppressionDecision(value).suppressions).not.toEqual([]);
      expect(suppressesNothing(bytes(value))).toBe(false);
    }
  });

  it('takes a payload with a unicode escape, which could spell a result', () => {
    const escaped = JSON.stringify(delivered([recipient('delivered')])).replace(
      '"result":"delivered"',
      '"result":"\\u0062ounced"',
    );

    expect(suppressesNothing(new TextEncoder().encode(escaped))).toBe(false);
  });

  it('reads only its own bytes of a larger buffer', () => {
    const inside = Buffer.from(`"bounced"${JSON.stringify(delivered([recipient('delivered')]))}`);

    expect(suppressesNothing(inside.subarray(9))).toBe(true);
    expect(suppressesNothing(inside.subarray(0, 20))).toBe(false);
  });
});

describe('toSuppressionDecisions', () => {
  const batch = (events: unknown[]) => ({
    id: 'batch-1',
    type: 'message.outcome_batch',
    timestamp: '2030-01-01T00:00:02Z',
    data: { events },
  });
  const delivered = event(
    { id: 'event-2', type: 'message.delivered' },
    { event: 'on_delivered', status: 'Delivered', bounce_classification: undefined },
  );

  it("decides on an outcome batch's events in order, each as if it came alone", () => {
    const decoded = toSuppressionDecisions(batch([delivered, event()]));

    expect(decoded).toEqual({
      events: [toSuppressionDecision(delivered), toSuppressionDecision(event())],
      unprocessable: [],
    });
    expect(
      decoded.events.map(({ eventId, suppressions }) => [eventId, suppressions.length]),
    ).toEqual([
      ['event-2', 0],
      ['event-1', 1],
    ]);
  });

  it('decides on any other message as its one event', () => {
    expect(toSuppressionDecisions(event())).toEqual({
      events: [toSuppressionDecision(event())],
      unprocessable: [],
    });
  });

  it('leaves out an event no retry can help, and decides on the others', () => {
    const decoded = toSuppressionDecisions(batch([event({ id: 42 }), event()]));

    expect(decoded.events).toEqual([toSuppressionDecision(event())]);
    expect(decoded.unprocessable).toEqual([expect.stringContaining('42') as unknown]);
  });

  it('refuses a batch with no event, or none it can read, as unprocessable', () => {
    expect(() => toSuppressionDecisions(batch([]))).toThrow(UnprocessableMessageError);
    expect(() => toSuppressionDecisions(batch([event({ id: 42 })]))).toThrow(
      UnprocessableMessageError,
    );
    expect(() => toSuppressionDecisions(event({ id: 42 }))).toThrow(UnprocessableMessageError);
  });

  it('reads a batch of deliveries and deferrals unparsed, not one with a bounce', () => {
    const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
    expect(suppressesNothing(bytes(batch([delivered, delivered])))).toBe(true);
    expect(suppressesNothing(bytes(batch([delivered, event()])))).toBe(false);
  });
});
