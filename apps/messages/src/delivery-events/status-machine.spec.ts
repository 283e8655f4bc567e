import { MESSAGE_STATUSES, type MessageStatus } from '@envoi/contracts-messages';

import {
  applyOutcome,
  attemptLog,
  deliveryFinished,
  type DeliveryState,
  MAX_LOGGED_ATTEMPTS,
  nextStatus,
  type ReportedOutcome,
} from './status-machine';

const CLOSED: MessageStatus[] = [
  'Bounced',
  'Failed',
  'Suppressed',
  'Cancelled',
  'Expired',
  'Sandbox Delivered',
  'Sandbox Deferred',
  'Sandbox Failed',
  'Sandbox Bounced',
  'Sandbox Suppressed',
];

/** Every order of the items. */
function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [
      item,
      ...rest,
    ]),
  );
}

describe('nextStatus', () => {
  it('moves forward: accepted → Deferred → Delivered → Bounced', () => {
    expect(nextStatus('Received', 'Deferred')).toBe('Deferred');
    expect(nextStatus('Scheduled', 'Deferred')).toBe('Deferred');
    expect(nextStatus('Deferred', 'Delivered')).toBe('Delivered');
    expect(nextStatus('Delivered', 'Bounced')).toBe('Bounced');
    expect(nextStatus('Received', 'Failed')).toBe('Failed');
    expect(nextStatus('Received', 'Suppressed')).toBe('Suppressed');
    expect(nextStatus('Scheduled', 'Expired')).toBe('Expired');
    expect(nextStatus('Deferred', 'Failed')).toBe('Failed');
    expect(nextStatus('Received', 'Sandbox Delivered')).toBe('Sandbox Delivered');
    expect(nextStatus('Received', 'Sandbox Deferred')).toBe('Sandbox Deferred');
  });

  it('never moves backwards: a late deferral leaves a delivered message delivered', () => {
    expect(nextStatus('Delivered', 'Deferred')).toBe('Delivered');
    expect(nextStatus('Bounced', 'Delivered')).toBe('Bounced');
    expect(nextStatus('Failed', 'Deferred')).toBe('Failed');
    expect(nextStatus('Deferred', 'Received')).toBe('Deferred');
  });

  it('lets only an asynchronous bounce leave Delivered', () => {
    for (const reported of MESSAGE_STATUSES) {
      expect([reported, nextStatus('Delivered', reported)]).toEqual([
        reported,
        reported === 'Bounced' ? 'Bounced' : 'Delivered',
      ]);
    }
  });

  it('lets nothing leave Cancelled, Expired, Failed, Bounced, Suppressed or a sandbox outcome', () => {
    for (const current of CLOSED) {
      for (const reported of MESSAGE_STATUSES) {
        expect([current, reported, nextStatus(current, reported)]).toEqual([
          current,
          reported,
          current,
        ]);
      }
    }
  });

  it('is idempotent and only ever answers the current or the reported status', () => {
    for (const current of MESSAGE_STATUSES) {
      for (const reported of MESSAGE_STATUSES) {
        const next = nextStatus(current, reported);
        expect([current, reported].includes(next)).toBe(true);
        expect(nextStatus(next, reported)).toBe(next);
        // Once moved, the message never goes back to where it was.
        if (next !== current) expect(nextStatus(next, current)).toBe(next);
      }
    }
  });

  it('ends in the same status whatever order the events of one delivery arrive in', () => {
    const histories: Array<[MessageStatus[], MessageStatus]> = [
      [['Deferred', 'Deferred', 'Delivered'], 'Delivered'],
      [['Deferred', 'Deferred', 'Failed'], 'Failed'],
      [['Deferred', 'Bounced'], 'Bounced'],
      [['Deferred', 'Delivered', 'Bounced'], 'Bounced'],
      [['Deferred', 'Expired'], 'Expired'],
      [['Suppressed'], 'Suppressed'],
      [['Sandbox Bounced'], 'Sandbox Bounced'],
    ];
    for (const [events, final] of histories) {
      for (const order of permutations(events)) {
        for (const start of ['Received', 'Scheduled'] as const) {
          expect([order, order.reduce(nextStatus, start)]).toEqual([order, final]);
        }
      }
    }
  });

  it('counts every status but the three waiting ones as final', () => {
    expect(MESSAGE_STATUSES.filter((status) => !deliveryFinished(status))).toEqual([
      'Received',
      'Scheduled',
      'Deferred',
    ]);
  });
});

describe('applyOutcome', () => {
  const accepted: DeliveryState = {
    status: 'Received',
    sentAt: null,
    deliveredAt: null,
    bounceClassification: null,
    numAttempts: 0,
    deliveryAttempts: [],
  };

  function outcome(
    status: MessageStatus,
    time: string,
    extra: Partial<ReportedOutcome['attempt']> & { bounce?: string } = {},
  ): ReportedOutcome {
    return {
      status,
      attempt: {
        time: new Date(time),
        remoteHost: extra.remoteHost ?? 'mx.example.test',
        reply: extra.reply ?? `reply for ${status}`,
        status: extra.status ?? status,
      },
      bounceClassification: extra.bounce ?? null,
    };
  }

  it('logs a deferral and a delivery, counting both attempts', () => {
    const deferred = applyOutcome(
      accepted,
      outcome('Deferred', '2030-01-01T00:00:00Z', { reply: '451 4.7.1 try later' }),
    );
    const delivered = applyOutcome(
      deferred,
      outcome('Delivered', '2030-01-01T00:05:00Z', { reply: '250 2.0.0 OK' }),
    );

    expect(delivered).toEqual({
      status: 'Delivered',
      sentAt: new Date('2030-01-01T00:00:00Z'),
      deliveredAt: new Date('2030-01-01T00:05:00Z'),
      bounceClassification: null,
      numAttempts: 2,
      deliveryAttempts: [
        {
          time: '2030-01-01T00:00:00.000Z',
          log: 'mx.example.test: 451 4.7.1 try later',
          status: 'Deferred',
        },
        {
          time: '2030-01-01T00:05:00.000Z',
          log: 'mx.example.test: 250 2.0.0 OK',
          status: 'Delivered',
        },
      ],
    });
  });

  it('keeps the status of a delivery that arrived before an earlier deferral, and orders the log by time', () => {
    const delivered = applyOutcome(accepted, outcome('Delivered', '2030-01-01T00:05:00Z'));
    const late = applyOutcome(delivered, outcome('Deferred', '2030-01-01T00:00:00Z'));

    expect(late).toMatchObject({
      status: 'Delivered',
      sentAt: new Date('2030-01-01T00:00:00Z'),
      deliveredAt: new Date('2030-01-01T00:05:00Z'),
      numAttempts: 2,
    });
    expect(late.deliveryAttempts.map((attempt) => attempt.status)).toEqual([
      'Deferred',
      'Delivered',
    ]);
  });

  it('keeps delivered_at when an asynchronous bounce follows, and takes its classification', () => {
    const delivered = applyOutcome(accepted, outcome('Delivered', '2030-01-01T00:00:00Z'));
    const bounced = applyOutcome(
      delivered,
      outcome('Bounced', '2030-01-01T01:00:00Z', { remoteHost: '', bounce: 'hard' }),
    );

    expect(bounced).toMatchObject({
      status: 'Bounced',
      deliveredAt: new Date('2030-01-01T00:00:00Z'),
      bounceClassification: 'hard',
      numAttempts: 2,
    });
    expect(bounced.deliveryAttempts[1]?.log).toBe('reply for Bounced');
  });

  it('ignores the classification of a bounce that cannot change the status', () => {
    const failed = applyOutcome(accepted, outcome('Failed', '2030-01-01T00:00:00Z'));
    const bounced = applyOutcome(
      failed,
      outcome('Bounced', '2030-01-01T00:01:00Z', { bounce: 'hard' }),
    );

    expect(bounced).toMatchObject({ status: 'Failed', bounceClassification: null });
  });

  it('logs a suppression or an expiry without counting an attempt', () => {
    const suppressed = applyOutcome(
      accepted,
      outcome('Suppressed', '2030-01-01T00:00:00Z', { remoteHost: '', reply: '' }),
    );
    const expired = applyOutcome(accepted, outcome('Expired', '2030-01-01T00:00:00Z'));

    expect(suppressed).toMatchObject({ status: 'Suppressed', sentAt: null, numAttempts: 0 });
    expect(suppressed.deliveryAttempts).toEqual([
      { time: '2030-01-01T00:00:00.000Z', log: 'Suppressed', status: 'Suppressed' },
    ]);
    expect(expired).toMatchObject({ status: 'Expired', sentAt: null, numAttempts: 0 });
  });

  it('records sandbox outcomes like real ones', () => {
    const sandbox = applyOutcome(
      accepted,
      outcome('Sandbox Delivered', '2030-01-01T00:00:00Z', { remoteHost: '' }),
    );

    expect(sandbox).toMatchObject({
      status: 'Sandbox Delivered',
      sentAt: new Date('2030-01-01T00:00:00Z'),
      deliveredAt: new Date('2030-01-01T00:00:00Z'),
      numAttempts: 1,
    });
  });

  it(`keeps the newest ${MAX_LOGGED_ATTEMPTS} log entries and counts every attempt`, () => {
    let state = accepted;
    for (let n = 0; n < MAX_LOGGED_ATTEMPTS + 5; n++) {
      state = applyOutcome(
        state,
        outcome('Deferred', new Date(Date.UTC(2030, 0, 1, 0, n)).toISOString()),
      );
    }

    expect(state.numAttempts).toBe(MAX_LOGGED_ATTEMPTS + 5);
    expect(state.deliveryAttempts).toHaveLength(MAX_LOGGED_ATTEMPTS);
    expect(state.deliveryAttempts[0]?.time).toBe('2030-01-01T00:05:00.000Z');
    expect(state.sentAt).toEqual(new Date('2030-01-01T00:00:00Z'));
  });

  it('writes the log line from the host and the reply', () => {
    expect(attemptLog('mx.a.test', ' 250 ok ', 'Delivered')).toBe('mx.a.test: 250 ok');
    expect(attemptLog('', 'connection refused', 'Deferred')).toBe('connection refused');
    expect(attemptLog('', '', 'Sandbox Failed')).toBe('Sandbox Failed');
  });
});
