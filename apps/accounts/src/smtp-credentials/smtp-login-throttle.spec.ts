import { afterFailure, type FailureCount, isBlocked, isExpired } from './smtp-login-throttle';

const SETTINGS = { maxFailures: 3, windowMs: 60_000, blockMs: 300_000 };
const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);

function failures(times: number[]): FailureCount | undefined {
  let count: FailureCount | undefined;
  for (const time of times) count = afterFailure(count, at(time), SETTINGS);
  return count;
}

describe('smtp login throttle', () => {
  it('counts failures within the window without blocking below the maximum', () => {
    const count = failures([0, 1_000]);
    expect(count).toEqual({ windowStartedAt: at(0), failures: 2, blockedUntil: null });
    expect(isBlocked(count, at(2_000))).toBe(false);
  });

  it('blocks for blockMs once the maximum is reached within the window', () => {
    const count = failures([0, 1_000, 2_000]);
    expect(count?.blockedUntil).toEqual(at(302_000));
    expect(isBlocked(count, at(301_999))).toBe(true);
    expect(isBlocked(count, at(302_000))).toBe(false);
  });

  it('starts a new window once the old one has run out', () => {
    const count = failures([0, 1_000, 61_000]);
    expect(count).toEqual({ windowStartedAt: at(61_000), failures: 1, blockedUntil: null });
  });

  it('is not blocked without any count', () => {
    expect(isBlocked(undefined, at(0))).toBe(false);
  });

  it('expires a count only once its window and its block have both run out', () => {
    const open = failures([0]);
    const blocked = failures([0, 1, 2]);
    if (!open || !blocked) throw new Error('no count');
    expect(isExpired(open, at(59_999), SETTINGS)).toBe(false);
    expect(isExpired(open, at(60_000), SETTINGS)).toBe(true);
    expect(isExpired(blocked, at(60_000), SETTINGS)).toBe(false);
    expect(isExpired(blocked, at(300_002), SETTINGS)).toBe(true);
  });
});
