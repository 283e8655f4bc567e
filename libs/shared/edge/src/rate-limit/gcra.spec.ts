import { gcraDecide, type GcraDecision, periodMs, type RateLimit, retryAfterSeconds } from './gcra';

const GENERAL: RateLimit = { perSecond: 100, burst: 200 };
const STATISTICS: RateLimit = { perSecond: 1, burst: 1 };
const NOW = 1_700_000_000_000;

/** Sends `count` requests at one instant, keeping the TAT, and returns every decision. */
function burstAt(
  nowMs: number,
  count: number,
  limit: RateLimit,
  tatMs?: number,
): { decisions: GcraDecision[]; tatMs: number | undefined } {
  let tat = tatMs;
  const decisions: GcraDecision[] = [];
  for (let i = 0; i < count; i += 1) {
    const decision = gcraDecide(tat, nowMs, limit);
    decisions.push(decision);
    tat = decision.tatMs;
  }
  return { decisions, tatMs: tat };
}

function allowedCount(decisions: GcraDecision[]): number {
  return decisions.filter((decision) => decision.allowed).length;
}

describe('periodMs', () => {
  it('is the time between two requests at the steady rate', () => {
    expect(periodMs(GENERAL)).toBe(10);
    expect(periodMs(STATISTICS)).toBe(1000);
    expect(periodMs({ perSecond: 5, burst: 10 })).toBe(200);
  });
});

describe('gcraDecide', () => {
  it.each<[string, RateLimit]>([
    ['general 100/s burst 200', GENERAL],
    ['statistics 1/s burst 1', STATISTICS],
    ['5/s burst 10', { perSecond: 5, burst: 10 }],
    ['3/s burst 7', { perSecond: 3, burst: 7 }],
  ])('lets exactly `burst` requests through at once, then denies (%s)', (_name, limit) => {
    const { decisions } = burstAt(NOW, limit.burst + 5, limit);
    expect(decisions.slice(0, limit.burst).every((decision) => decision.allowed)).toBe(true);
    expect(decisions.slice(limit.burst).some((decision) => decision.allowed)).toBe(false);
    expect(allowedCount(decisions)).toBe(limit.burst);
  });

  it('advances the TAT by one period per request let through, from now', () => {
    const first = gcraDecide(undefined, NOW, GENERAL);
    expect(first).toEqual({ allowed: true, tatMs: NOW + 10, retryAfterMs: 0 });
    const second = gcraDecide(first.tatMs, NOW, GENERAL);
    expect(second).toEqual({ allowed: true, tatMs: NOW + 20, retryAfterMs: 0 });
  });

  it('treats a TAT in the past as a full bucket', () => {
    expect(gcraDecide(NOW - 60_000, NOW, GENERAL).tatMs).toBe(NOW + 10);
    const { decisions } = burstAt(NOW, 250, GENERAL, NOW - 60_000);
    expect(allowedCount(decisions)).toBe(200);
  });

  it('keeps the TAT unchanged when it denies', () => {
    const { tatMs } = burstAt(NOW, 1, STATISTICS);
    const denied = gcraDecide(tatMs, NOW + 200, STATISTICS);
    expect(denied.allowed).toBe(false);
    expect(denied.tatMs).toBe(tatMs);
  });

  it('lets one more through after one period, and only one', () => {
    const limit: RateLimit = { perSecond: 5, burst: 10 };
    const { tatMs } = burstAt(NOW, 10, limit);
    expect(gcraDecide(tatMs, NOW + 199, limit).allowed).toBe(false);
    const { decisions } = burstAt(NOW + 200, 3, limit, tatMs);
    expect(decisions.map((decision) => decision.allowed)).toEqual([true, false, false]);
  });

  it('refills the whole burst after burst × period', () => {
    const { tatMs } = burstAt(NOW, 200, GENERAL);
    const { decisions } = burstAt(NOW + 2_000, 201, GENERAL, tatMs);
    expect(allowedCount(decisions)).toBe(200);
  });

  it('statistics 1/1: one request, then the next one a second later', () => {
    const first = gcraDecide(undefined, NOW, STATISTICS);
    expect(first.allowed).toBe(true);
    const tooSoon = gcraDecide(first.tatMs, NOW, STATISTICS);
    expect(tooSoon).toEqual({ allowed: false, tatMs: first.tatMs, retryAfterMs: 1000 });
    expect(gcraDecide(first.tatMs, NOW + 400, STATISTICS).retryAfterMs).toBe(600);
    expect(gcraDecide(first.tatMs, NOW + 999, STATISTICS).allowed).toBe(false);
    const next = gcraDecide(first.tatMs, NOW + 1000, STATISTICS);
    expect(next).toEqual({ allowed: true, tatMs: NOW + 2000, retryAfterMs: 0 });
  });

  it('says how long until the next request fits', () => {
    const { decisions, tatMs } = burstAt(NOW, 201, GENERAL);
    expect(decisions[200]).toEqual({ allowed: false, tatMs, retryAfterMs: 10 });
    expect(gcraDecide(tatMs, NOW + 4, GENERAL).retryAfterMs).toBe(6);
    const limit: RateLimit = { perSecond: 5, burst: 10 };
    const full = burstAt(NOW, 10, limit);
    expect(gcraDecide(full.tatMs, NOW, limit).retryAfterMs).toBe(200);
    expect(gcraDecide(full.tatMs, NOW + 50, limit).retryAfterMs).toBe(150);
  });
});

describe('retryAfterSeconds', () => {
  it.each([
    [0, 1],
    [1, 1],
    [10, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [2500, 3],
    [60_000, 60],
  ])('%i ms → %i s', (ms, seconds) => {
    expect(retryAfterSeconds(ms)).toBe(seconds);
  });
});
