/** A webhook's call counters and its enabled state, as stored. */
export interface WebhookCounters {
  successCount: number;
  errorCount: number;
  errorsSinceLastSuccess: number;
  lastRequestAt: Date | null;
  enabled: boolean;
  disabledReason: string | null;
}

/** What one recorded attempt tells its webhook's counters. */
export interface CountedAttempt {
  attemptedAt: Date;
  succeeded: boolean;
  /** 410 Gone: disables the webhook at once. */
  gone: boolean;
  /** The HTTP status answered; null or absent when there was no response. */
  responseStatus?: number | null;
}

/** The attempt that disabled a webhook, and its failed calls in a row then (that one included). */
export interface DisablingAttempt {
  attempt: CountedAttempt;
  consecutiveFailures: number;
}

/** The counters after some attempts, and the attempt that disabled the webhook, if one did. */
export interface CountersAfter extends WebhookCounters {
  disabledBy: DisablingAttempt | null;
}

export const GONE_REASON = 'the endpoint answered 410 Gone';
export const FAILURES_REASON = 'too many consecutive failed calls';

/**
 * The counters after `attempts`, applied one by one in the order they were made (the order of
 * the array for equal times), exactly as if each had been recorded alone: a success resets the
 * consecutive failures; 410 Gone, or the failure that brings them to `disableAfterFailures`,
 * disables the webhook, the first of them giving the reason. A success never enables it again.
 */
export function countersAfter(
  current: WebhookCounters,
  attempts: readonly CountedAttempt[],
  disableAfterFailures: number,
): CountersAfter {
  const ordered = attempts
    .map((attempt, position) => ({ attempt, position }))
    .sort(
      (a, b) =>
        a.attempt.attemptedAt.getTime() - b.attempt.attemptedAt.getTime() ||
        a.position - b.position,
    )
    .map(({ attempt }) => attempt);
  let counters = current;
  let disabledBy: DisablingAttempt | null = null;
  for (const attempt of ordered) {
    const next = countedOnce(counters, attempt, disableAfterFailures);
    if (counters.enabled && !next.enabled) {
      disabledBy = { attempt, consecutiveFailures: next.errorsSinceLastSuccess };
    }
    counters = next;
  }
  return { ...counters, disabledBy };
}

function countedOnce(
  counters: WebhookCounters,
  attempt: CountedAttempt,
  disableAfterFailures: number,
): WebhookCounters {
  const errorsSinceLastSuccess = attempt.succeeded ? 0 : counters.errorsSinceLastSuccess + 1;
  const disables =
    attempt.gone || (!attempt.succeeded && errorsSinceLastSuccess >= disableAfterFailures);
  const disablesNow = counters.enabled && disables;
  return {
    successCount: counters.successCount + (attempt.succeeded ? 1 : 0),
    errorCount: counters.errorCount + (attempt.succeeded ? 0 : 1),
    errorsSinceLastSuccess,
    lastRequestAt: attempt.attemptedAt,
    enabled: counters.enabled && !disables,
    disabledReason: disablesNow
      ? attempt.gone
        ? GONE_REASON
        : FAILURES_REASON
      : counters.disabledReason,
  };
}
