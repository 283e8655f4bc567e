/** How calls to customers' URLs are retried (webhooks: WEBHOOK_*; routes: ROUTE_*). */
export interface RetrySchedule {
  baseMs: number;
  maxAttempts: number;
}

/** The spread of a retry's delay either side of its nominal value. */
export const RETRY_JITTER = 0.1;

/**
 * The wait after the n-th failed attempt: n^4 × base (1, 16, 81, 256, 625 s by default), ±10 %
 * (`random` in [0, 1)); null once the attempts are spent.
 */
export function retryDelayMs(
  failedAttempts: number,
  schedule: RetrySchedule,
  random: () => number = Math.random,
): number | null {
  if (failedAttempts >= schedule.maxAttempts) return null;
  const nominal = failedAttempts ** 4 * schedule.baseMs;
  return Math.round(nominal * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}
