import type { DeliveryView } from '@envoi/contracts-messages';

import type { SendResult } from '../smtp/smtp-sender';
import { byDomain, combine } from './delivery.service';
import { isAttemptable, outcomeEvent, sandboxOutcome } from './outcomes';

describe('sandboxOutcome', () => {
  it.each([
    ['deliver', 'delivered', 'Sandbox Delivered'],
    ['bounce', 'bounced', 'Sandbox Bounced'],
    ['defer', 'transient_error', 'Sandbox Deferred'],
    ['fail', 'failed', 'Sandbox Failed'],
    ['suppress', 'suppressed', 'Sandbox Suppressed'],
  ] as const)('%s → %s (%s)', (result, kind, status) => {
    expect(sandboxOutcome(result)).toMatchObject({ kind, status, remoteHost: '' });
  });

  it('delivers by default', () => {
    expect(sandboxOutcome(null)).toMatchObject({ kind: 'delivered', status: 'Sandbox Delivered' });
  });
});

describe('isAttemptable', () => {
  it('attempts received, scheduled and deferred messages only', () => {
    expect(['Received', 'Scheduled', 'Deferred'].every((s) => isAttemptable(s as never))).toBe(
      true,
    );
    expect(
      ['Delivered', 'Cancelled', 'Expired', 'Sandbox Deferred'].some((s) =>
        isAttemptable(s as never),
      ),
    ).toBe(false);
  });
});

describe('outcomeEvent', () => {
  it('carries the webhook fields, the status and the attempt', () => {
    const view = {
      id: '0190f3a2-7c1e-7d3a-9b2c-1234567890ab',
      account_id: '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60',
      sender: 'hello@example.com',
      subject: 'Hi',
      message_id_header: '<0190f3a2-7c1e-7d3a-9b2c-1234567890ab@example.com>',
      envelope_recipients: ['to@dest.test'],
      sandbox: false,
    } as DeliveryView;
    const time = new Date('2026-01-01T00:00:00Z');
    const event = outcomeEvent(
      'e1',
      view,
      2,
      {
        kind: 'bounced',
        status: 'Bounced',
        remoteHost: 'mx.dest.test',
        reply: '550 5.1.1 no',
        bounceClassification: 'hard',
      },
      time,
    );
    expect(event).toEqual({
      id: 'e1',
      type: 'message.bounced',
      timestamp: time.toISOString(),
      data: {
        account_id: view.account_id,
        event: 'on_bounced',
        from: 'hello@example.com',
        recipient: 'to@dest.test',
        subject: 'Hi',
        message_id_header: view.message_id_header,
        id: view.id,
        status: 'Bounced',
        attempt: {
          time: time.toISOString(),
          remote_host: 'mx.dest.test',
          reply: '550 5.1.1 no',
          status: 'Bounced',
          attempt: 2,
        },
        bounce_classification: 'hard',
        sandbox: false,
      },
    });
  });
});

describe('combine', () => {
  const accepted: SendResult = {
    kind: 'accepted',
    host: 'mx.a.test',
    reply: '250 ok',
    secure: true,
    rejected: [],
  };
  const bounced: SendResult = {
    kind: 'permanent',
    host: 'mx.b.test',
    reply: { code: 550, enhanced: '5.1.1', text: 'unknown' },
  };
  const deferred: SendResult = { kind: 'transient', host: 'mx.c.test', reply: '451 later' };

  it('is a transient failure while any domain deferred', () => {
    expect(
      combine(
        [
          { recipients: ['a@a.test'], result: accepted },
          { recipients: ['c@c.test'], result: deferred },
        ],
        true,
      ),
    ).toMatchObject({ kind: 'transient_error', status: 'Deferred', remoteHost: 'mx.c.test' });
  });

  it('bounces (with its classification) when nobody accepted it', () => {
    expect(combine([{ recipients: ['b@b.test'], result: bounced }], false)).toEqual({
      kind: 'bounced',
      status: 'Bounced',
      remoteHost: 'mx.b.test',
      reply: '550 5.1.1 unknown',
      bounceClassification: 'hard',
    });
  });

  it('is delivered when someone accepted it, naming the refusals', () => {
    expect(
      combine(
        [
          { recipients: ['a@a.test'], result: accepted },
          { recipients: ['b@b.test'], result: bounced },
        ],
        true,
      ),
    ).toMatchObject({
      kind: 'delivered',
      reply: '250 ok; b@b.test: 550 5.1.1 unknown',
    });
  });
});

describe('byDomain', () => {
  it('groups recipients by their ASCII domain', () => {
    expect([...byDomain(['a@X.test', 'b@x.test', 'c@bücher.test'])]).toEqual([
      ['x.test', ['a@X.test', 'b@x.test']],
      ['xn--bcher-kva.test', ['c@bücher.test']],
    ]);
  });
});
