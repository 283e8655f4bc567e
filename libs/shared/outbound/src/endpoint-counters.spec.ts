import {
  type CountedAttempt,
  countersAfter,
  type EndpointCounters,
  FAILURES_REASON,
  GONE_REASON,
} from './endpoint-counters';

describe('countersAfter', () => {
  const start: EndpointCounters = {
    successCount: 0,
    errorCount: 0,
    errorsSinceLastSuccess: 0,
    lastRequestAt: null,
    enabled: true,
    disabledReason: null,
  };
  const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second));
  const success = (second: number): CountedAttempt => ({
    attemptedAt: at(second),
    succeeded: true,
    gone: false,
  });
  const failure = (second: number): CountedAttempt => ({
    attemptedAt: at(second),
    succeeded: false,
    gone: false,
  });
  const gone = (second: number): CountedAttempt => ({ ...failure(second), gone: true });

  it('counts successes and failures; the consecutive failures are those after the last success', () => {
    expect(countersAfter(start, [failure(1), success(2), failure(3), failure(4)], 100)).toEqual({
      successCount: 1,
      errorCount: 3,
      errorsSinceLastSuccess: 2,
      lastRequestAt: at(4),
      enabled: true,
      disabledReason: null,
      disabledBy: null,
    });
  });

  it('applies the attempts in the order they were made, not the order they came in', () => {
    const after = countersAfter(start, [failure(3), success(1), failure(2)], 100);
    expect(after).toMatchObject({ errorsSinceLastSuccess: 2, lastRequestAt: at(3) });
    expect(countersAfter(start, [success(3), failure(1), failure(2)], 100)).toMatchObject({
      errorsSinceLastSuccess: 0,
      lastRequestAt: at(3),
    });
  });

  it('adds to the consecutive failures it starts from', () => {
    const failing = { ...start, errorsSinceLastSuccess: 2 };
    expect(countersAfter(failing, [failure(1)], 100).errorsSinceLastSuccess).toBe(3);
    expect(countersAfter(failing, [success(1), failure(2)], 100).errorsSinceLastSuccess).toBe(1);
  });

  it('disables on the failure that reaches the limit, even if a success follows in the batch', () => {
    const failing = { ...start, errorsSinceLastSuccess: 1 };
    expect(countersAfter(failing, [failure(1), failure(2), success(3)], 3)).toEqual({
      successCount: 1,
      errorCount: 2,
      errorsSinceLastSuccess: 0,
      lastRequestAt: at(3),
      enabled: false,
      disabledReason: FAILURES_REASON,
      // The failure that reached the limit, with the run of failures it ended.
      disabledBy: { attempt: failure(2), consecutiveFailures: 3 },
    });
  });

  it('does not disable when a success breaks the run before the limit', () => {
    const after = countersAfter(start, [failure(1), failure(2), success(3), failure(4)], 3);
    expect(after).toMatchObject({ enabled: true, errorsSinceLastSuccess: 1 });
  });

  it('disables on 410 Gone at once, the first reason kept', () => {
    expect(countersAfter(start, [success(1), gone(2), failure(3)], 2)).toMatchObject({
      enabled: false,
      disabledReason: GONE_REASON,
      errorCount: 2,
    });
    expect(countersAfter(start, [failure(1), failure(2), gone(3)], 2)).toMatchObject({
      enabled: false,
      disabledReason: FAILURES_REASON,
    });
  });

  it('leaves a disabled webhook disabled with its reason, whatever succeeds', () => {
    const disabled = { ...start, enabled: false, disabledReason: 'disabled by its owner' };
    expect(countersAfter(disabled, [gone(1), success(2)], 1)).toMatchObject({
      enabled: false,
      disabledReason: 'disabled by its owner',
      successCount: 1,
      errorCount: 1,
    });
  });
});
