/** When transient failures are retried, and when they stop. */
export interface RetryPolicy {
  /** Delay after the n-th failed attempt is `scheduleMs[n - 1]`; past the end: no more tries. */
  scheduleMs: readonly number[];
  /** Each delay varies uniformly by up to this fraction either way (0 … 1). */
  jitterRatio: number;
  /** No attempt starts later than this long after the first one. */
  maxAgeMs: number;
}

export type RetryDecision =
  { kind: 'retry'; at: Date; delayMs: number } | { kind: 'give-up'; reason: string };

export interface RetryInput {
  /** The attempt that just failed (1 for the first). */
  attempt: number;
  now: Date;
  /** When the message's first attempt started. */
  firstAttemptAt: Date;
  /** `schedule.expires`, if the sender set one. */
  expiresAt: Date | null;
}

/** A delay varied by ±ratio: `random` in [0, 1) maps to [delay·(1−ratio), delay·(1+ratio)). */
export function jitter(delayMs: number, ratio: number, random: () => number = Math.random): number {
  const bounded = Math.min(Math.max(ratio, 0), 1);
  return Math.max(0, Math.round(delayMs * (1 + bounded * (2 * random() - 1))));
}

/**
 * What follows a transient failure: the next attempt's time, or giving up because the schedule
 * is used up, or because the next attempt would start after `schedule.expires` or past the
 * maximum age.
 */
export function nextRetry(
  policy: RetryPolicy,
  input: RetryInput,
  random: () => number = Math.random,
): RetryDecision {
  const base = policy.scheduleMs[input.attempt - 1];
  if (base === undefined) {
    return { kind: 'give-up', reason: `no retry left after ${input.attempt} attempts` };
  }
  const delayMs = jitter(base, policy.jitterRatio, random);
  const at = new Date(input.now.getTime() + delayMs);
  const maxAgeAt = input.firstAttemptAt.getTime() + policy.maxAgeMs;
  if (at.getTime() > maxAgeAt) {
    return { kind: 'give-up', reason: 'the next attempt would be past the maximum message age' };
  }
  if (input.expiresAt && at.getTime() > input.expiresAt.getTime()) {
    return { kind: 'give-up', reason: 'the next attempt would be past schedule.expires' };
  }
  return { kind: 'retry', at, delayMs };
}
