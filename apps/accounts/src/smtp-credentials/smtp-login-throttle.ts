/** Failed-login throttle settings (reliability plan item 33). */
export interface ThrottleSettings {
  maxFailures: number;
  windowMs: number;
  blockMs: number;
}

/** The failures counted for one remote address or one username. */
export interface FailureCount {
  windowStartedAt: Date;
  failures: number;
  /** Logins are refused unchecked until then; null when not blocked. */
  blockedUntil: Date | null;
}

export function isBlocked(count: FailureCount | undefined, now: Date): boolean {
  return count?.blockedUntil != null && count.blockedUntil.getTime() > now.getTime();
}

/**
 * The count after one more failure: a window that has run out starts again at this failure, and
 * reaching the maximum within a window blocks for blockMs (each further failure in the same
 * window, once the block has lapsed, blocks again).
 */
export function afterFailure(
  count: FailureCount | undefined,
  now: Date,
  settings: ThrottleSettings,
): FailureCount {
  const windowOpen =
    count !== undefined && now.getTime() - count.windowStartedAt.getTime() < settings.windowMs;
  const failures = windowOpen ? count.failures + 1 : 1;
  const windowStartedAt = windowOpen ? count.windowStartedAt : now;
  const blockedUntil =
    failures >= settings.maxFailures
      ? new Date(now.getTime() + settings.blockMs)
      : (count?.blockedUntil ?? null);
  return { windowStartedAt, failures, blockedUntil };
}

/** Whether a count can be forgotten: its window and any block have both run out. */
export function isExpired(count: FailureCount, now: Date, settings: ThrottleSettings): boolean {
  return (
    now.getTime() - count.windowStartedAt.getTime() >= settings.windowMs && !isBlocked(count, now)
  );
}
