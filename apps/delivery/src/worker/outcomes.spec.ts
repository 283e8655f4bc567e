import type { DeliveryView } from '@envoi/contracts-messages';
import { WebhookPayloadValidator } from '@envoi/shared-testing';

import { byDomain } from './delivery.service';
import { isAttemptable, outcomeEvent, sandboxOutcome } from './outcomes';

describe('sandboxOutcome', () => {
  it.each([
    ['deliver', 'delivered', 'Sandbox Delivered'],
    ['bounce', 'bounced', 'Sandbox Bounced'],
    ['defer', 'transient_error', 'Sandbox Deferred'],
    ['fail', 'failed', 'Sandbox Failed'],
    ['suppress', 'suppressed', 'Sandbox Suppressed'],
  ] as const)('%s → %s (%s)', (result, kind, status) => {
    const outcome = sandboxOutcome(result, ['a@x.test', 'b@y.test']);
    expect(outcome).toMatchObject({ kind, status, remoteHost: '' });
    expect(outcome.recipients.map((recipient) => [recipient.email, recipient.result])).toEqual([
      ['a@x.test', kind],
      ['b@y.test', kind],
    ]);
  });

  it('delivers by default', () => {
    expect(sandboxOutcome(null, ['a@x.test'])).toMatchObject({
      kind: 'delivered',
      status: 'Sandbox Delivered',
    });
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
  const webhookPayloads = new WebhookPayloadValidator();
  const view = {
    id: '0190f3a2-7c1e-7d3a-9b2c-1234567890ab',
    account_id: '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60',
    sender: 'hello@example.com',
    subject: 'Hi',
    message_id_header: '<0190f3a2-7c1e-7d3a-9b2c-1234567890ab@example.com>',
    envelope_recipients: ['to@dest.test'],
    sandbox: false,
  } as DeliveryView;

  it.each(['deliver', 'bounce', 'defer', 'fail', 'suppress'] as const)(
    'sandbox %s: a payload of webhooks.yaml',
    (result) => {
      const outcome = sandboxOutcome(result, view.envelope_recipients);
      const event = outcomeEvent('e1', view, 1, outcome, new Date('2026-01-01T00:00:00Z'));
      expect(webhookPayloads.eventViolations(event)).toEqual([]);
    },
  );

  it('carries the webhook fields, the status and the attempt', () => {
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
        recipients: [
          {
            email: 'to@dest.test',
            result: 'bounced',
            remote_host: 'mx.dest.test',
            reply: '550 5.1.1 no',
            bounce_classification: 'hard',
          },
        ],
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
        is_bot: false,
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
        recipients: [
          {
            email: 'to@dest.test',
            result: 'bounced',
            remote_host: 'mx.dest.test',
            reply: '550 5.1.1 no',
            bounce_classification: 'hard',
          },
        ],
      },
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
