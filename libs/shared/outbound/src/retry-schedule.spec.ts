import { retryDelayMs } from './retry-schedule';

describe('retryDelayMs', () => {
  const schedule = { baseMs: 1_000, maxAttempts: 6 };

  it('waits failures^4 × base: 1, 16, 81, 256 and 625 s, then gives up after 6 attempts', () => {
    const nominal = [1, 2, 3, 4, 5].map((failures) => retryDelayMs(failures, schedule, () => 0.5));
    expect(nominal).toEqual([1_000, 16_000, 81_000, 256_000, 625_000]);
    expect(retryDelayMs(6, schedule, () => 0.5)).toBeNull();
  });

  it('spreads each wait within ±10 %', () => {
    expect(retryDelayMs(2, schedule, () => 0)).toBe(14_400);
    expect(retryDelayMs(2, schedule, () => 0.999_999)).toBeCloseTo(17_600, -1);
    for (let sample = 0; sample < 200; sample++) {
      const delay = retryDelayMs(3, schedule) ?? 0;
      expect(delay).toBeGreaterThanOrEqual(72_900);
      expect(delay).toBeLessThanOrEqual(89_100);
    }
  });

  it('follows the configured base and attempt count', () => {
    expect(retryDelayMs(2, { baseMs: 10, maxAttempts: 3 }, () => 0.5)).toBe(160);
    expect(retryDelayMs(3, { baseMs: 10, maxAttempts: 3 }, () => 0.5)).toBeNull();
  });
});
