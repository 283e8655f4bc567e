import type { RecipientOutcomeData } from '@envoi/contracts-delivery';

import type { SendResult } from '../smtp/smtp-sender';
import {
  giveUp,
  printableOutcome,
  routeFailureOutcomes,
  sendOutcomes,
  summarize,
} from './recipient-outcomes';

const userUnknown = { code: 550, enhanced: '5.1.1', text: 'No such user' };
const greylisted = { code: 451, enhanced: '4.7.1', text: 'Try again later' };

const partial: SendResult = {
  kind: 'accepted',
  host: 'mx.x.test',
  reply: '250 2.0.0 OK',
  secure: true,
  refused: [
    { recipient: 'cc@x.test', reply: userUnknown, text: '550 5.1.1 No such user' },
    { recipient: 'bcc@x.test', reply: greylisted, text: '451 4.7.1 Try again later' },
  ],
};

describe('sendOutcomes', () => {
  it('gives each recipient of a partial delivery its own outcome', () => {
    expect(sendOutcomes(['to@x.test', 'cc@x.test', 'bcc@x.test'], partial)).toEqual([
      { email: 'to@x.test', result: 'delivered', remote_host: 'mx.x.test', reply: '250 2.0.0 OK' },
      {
        email: 'cc@x.test',
        result: 'bounced',
        remote_host: 'mx.x.test',
        reply: '550 5.1.1 No such user',
        bounce_classification: 'hard',
      },
      {
        email: 'bcc@x.test',
        result: 'transient_error',
        remote_host: 'mx.x.test',
        reply: '451 4.7.1 Try again later',
      },
    ]);
  });

  it('reads every refusal on its own when all recipients were refused', () => {
    const refused: SendResult = { kind: 'refused', host: 'mx.x.test', refused: partial.refused };
    expect(
      sendOutcomes(['cc@x.test', 'bcc@x.test', 'unnamed@x.test'], refused).map((r) => r.result),
    ).toEqual(['bounced', 'transient_error', 'transient_error']);
  });

  it('applies a refused transaction or a transient failure to every recipient', () => {
    const permanent: SendResult = { kind: 'permanent', host: 'mx.x.test', reply: userUnknown };
    expect(sendOutcomes(['a@x.test', 'b@x.test'], permanent).map((r) => r.result)).toEqual([
      'bounced',
      'bounced',
    ]);
    const transient: SendResult = { kind: 'transient', host: '', reply: 'ECONNREFUSED' };
    expect(sendOutcomes(['a@x.test'], transient)).toEqual([
      { email: 'a@x.test', result: 'transient_error', remote_host: '', reply: 'ECONNREFUSED' },
    ]);
  });
});

describe('routeFailureOutcomes', () => {
  it('bounces a permanent routing answer and defers a DNS failure', () => {
    const noMail = { kind: 'permanent', reply: '556 5.1.10 the domain accepts no mail' } as const;
    expect(routeFailureOutcomes(['a@x.test'], noMail)[0]).toMatchObject({
      result: 'bounced',
      reply: '556 5.1.10 the domain accepts no mail',
    });
    const servfail = { kind: 'transient', reply: 'DNS SERVFAIL' } as const;
    expect(routeFailureOutcomes(['a@x.test'], servfail)[0]).toMatchObject({
      result: 'transient_error',
      reply: 'DNS SERVFAIL',
    });
  });
});

describe('summarize', () => {
  const mixed = sendOutcomes(['to@x.test', 'cc@x.test', 'bcc@x.test'], partial);

  it('is Deferred while any recipient is to be retried, naming each reply', () => {
    expect(summarize(mixed, { deliveredEarlier: false })).toMatchObject({
      kind: 'transient_error',
      status: 'Deferred',
      remoteHost: 'mx.x.test',
      reply:
        'to@x.test: 250 2.0.0 OK; cc@x.test: 550 5.1.1 No such user; bcc@x.test: 451 4.7.1 Try again later',
    });
  });

  it('is Delivered once anyone accepted it, now or earlier', () => {
    const bounced = mixed.filter((recipient) => recipient.result === 'bounced');
    expect(summarize(bounced, { deliveredEarlier: true })).toMatchObject({
      kind: 'delivered',
      status: 'Delivered',
      reply: '550 5.1.1 No such user',
    });
    expect(summarize([], { deliveredEarlier: true })).toMatchObject({
      kind: 'delivered',
      reply: 'delivered earlier',
    });
  });

  it('bounces with the first bounce classification when nobody accepted it', () => {
    const outcome = summarize([mixed[1]], { deliveredEarlier: false });
    expect(outcome).toEqual({
      kind: 'bounced',
      status: 'Bounced',
      remoteHost: 'mx.x.test',
      reply: '550 5.1.1 No such user',
      bounceClassification: 'hard',
      recipients: [mixed[1]],
    });
  });

  it('fails (or expires) with the reason given', () => {
    const failed: RecipientOutcomeData[] = [
      { email: 'a@x.test', result: 'failed', remote_host: '', reply: 'expired before delivery' },
    ];
    expect(
      summarize(failed, {
        deliveredEarlier: false,
        failureReason: 'expired',
        failedStatus: 'Expired',
      }),
    ).toMatchObject({ kind: 'failed', status: 'Expired', failureReason: 'expired' });
  });
});

describe('giveUp', () => {
  it('fails the recipients still deferred and keeps the others', () => {
    const deferred = summarize(sendOutcomes(['to@x.test', 'cc@x.test', 'bcc@x.test'], partial), {
      deliveredEarlier: false,
    });
    const final = giveUp(deferred, 'no retry left after 3 attempts', false);
    expect(final).toMatchObject({
      kind: 'delivered',
      status: 'Delivered',
      failureReason: 'retries_exhausted',
    });
    expect(final.recipients.map((recipient) => [recipient.email, recipient.result])).toEqual([
      ['to@x.test', 'delivered'],
      ['cc@x.test', 'bounced'],
      ['bcc@x.test', 'failed'],
    ]);
    expect(final.recipients[2]?.reply).toBe(
      '451 4.7.1 Try again later; giving up: no retry left after 3 attempts',
    );
  });

  it('fails a single recipient with the reason appended to its reply', () => {
    const deferred = summarize(
      [{ email: 'a@x.test', result: 'transient_error', remote_host: 'mx', reply: '451 later' }],
      { deliveredEarlier: false },
    );
    expect(giveUp(deferred, 'too old', false)).toMatchObject({
      kind: 'failed',
      status: 'Failed',
      reply: '451 later; giving up: too old',
      failureReason: 'retries_exhausted',
    });
  });
});

describe('printableOutcome', () => {
  it('turns control characters from the network into spaces, tabs kept', () => {
    const outcome = summarize(
      [
        {
          email: 'a@x.test',
          result: 'delivered',
          remote_host: 'mx\u0000.x',
          reply: '250 ok\u0000\u0001\tid',
        },
      ],
      { deliveredEarlier: false },
    );
    expect(printableOutcome(outcome)).toMatchObject({
      remoteHost: 'mx .x',
      reply: '250 ok \tid',
      recipients: [{ remote_host: 'mx .x', reply: '250 ok \tid' }],
    });
  });
});
