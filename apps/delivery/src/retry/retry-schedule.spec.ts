import { jitter, nextRetry, type RetryPolicy } from './retry-schedule';

const MINUTE = 60_000;
const policy: RetryPolicy = {
  scheduleMs: [MINUTE, 5 * MINUTE, 15 * MINUTE],
  jitterRatio: 0.1,
  maxAgeMs: 60 * MINUTE,
};
const start = new Date('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(start.getTime() + ms);

describe('jitter', () => {
  it('stays within ±ratio of the delay', () => {
    expect(jitter(1_000, 0.1, () => 0)).toBe(900);
    expect(jitter(1_000, 0.1, () => 0.5)).toBe(1_000);
    expect(jitter(1_000, 0.1, () => 0.999_999)).toBe(1_100);
    expect(jitter(1_000, 0, () => 0)).toBe(1_000);
  });
});

describe('nextRetry', () => {
  it('follows the schedule, one entry per failed attempt', () => {
    const middle = () => 0.5;
    expect(
      nextRetry(policy, { attempt: 1, now: start, firstAttemptAt: start, expiresAt: null }, middle),
    ).toEqual({ kind: 'retry', at: at(MINUTE), delayMs: MINUTE });
    expect(
      nextRetry(
        policy,
        { attempt: 3, now: at(10 * MINUTE), firstAttemptAt: start, expiresAt: null },
        middle,
      ),
    ).toEqual({ kind: 'retry', at: at(25 * MINUTE), delayMs: 15 * MINUTE });
  });

  it('gives up once the schedule is used up', () => {
    expect(
      nextRetry(policy, {
        attempt: 4,
        now: at(30 * MINUTE),
        firstAttemptAt: start,
        expiresAt: null,
      }),
    ).toEqual({ kind: 'give-up', reason: 'no retry left after 4 attempts' });
  });

  it('gives up when the next attempt would be past the maximum age or schedule.expires', () => {
    const late = nextRetry(
      policy,
      { attempt: 3, now: at(50 * MINUTE), firstAttemptAt: start, expiresAt: null },
      () => 0.5,
    );
    expect(late).toMatchObject({
      kind: 'give-up',
      reason: expect.stringContaining('maximum') as unknown,
    });
    const expiring = nextRetry(
      policy,
      { attempt: 1, now: start, firstAttemptAt: start, expiresAt: at(30_000) },
      () => 0.5,
    );
    expect(expiring).toMatchObject({
      kind: 'give-up',
      reason: expect.stringContaining('expires') as unknown,
    });
  });
});
