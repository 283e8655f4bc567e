/** The call counters of an endpoint (a webhook, a route) and its enabled state, as stored. */
export interface EndpointCounters {
  successCount: number;
  errorCount: number;
  errorsSinceLastSuccess: number;
  lastRequestAt: Date | null;
  enabled: boolean;
  disabledReason: string | null;
}

/** What one recorded attempt tells its endpoint's counters. */
export interface CountedAttempt {
  attemptedAt: Date;
  succeeded: boolean;
  /** 410 Gone: disables the endpoint at once (webhooks). */
  gone: boolean;
  /** The HTTP status answered; null or absent when there was no response. */
  responseStatus?: number | null;
}

/** The attempt that disabled an endpoint, and its failed calls in a row then (that one included). */
export interface DisablingAttempt {
  attempt: CountedAttempt;
  consecutiveFailures: number;
}

/** The counters after some attempts, and the attempt that disabled the endpoint, if one did. */
export interface CountersAfter extends EndpointCounters {
  disabledBy: DisablingAttempt | null;
}

export const GONE_REASON = 'the endpoint answered 410 Gone';
export const FAILURES_REASON = 'too many consecutive failed calls';

/**
 * The counters after `attempts`, applied one by one in the order they were made (the order of
 * the array for equal times), exactly as if each had been recorded alone: a success resets the
 * consecutive failures; 410 Gone, or the failure that brings them to `disableAfterFailures`,
 * disables the endpoint, the first of them giving the reason. A success never enables it again.
 */
export function countersAfter(
  current: EndpointCounters,
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
  counters: EndpointCounters,
  attempt: CountedAttempt,
  disableAfterFailures: number,
): EndpointCounters {
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

/** The stored columns of an endpoint's counters that the next ones depend on. */
export interface StoredCountersRow {
  errors_since_last_success: number;
  last_request_at: Date | null;
  enabled: boolean;
  disabled_reason?: string | null;
}

/**
 * countersAfter from a stored row: `successCount` and `errorCount` come out as the increments
 * to add to the stored counts, which may exceed a JavaScript integer's exact range.
 */
export function countersAddedTo(
  row: StoredCountersRow,
  attempts: readonly CountedAttempt[],
  disableAfterFailures: number,
): CountersAfter {
  return countersAfter(
    {
      successCount: 0,
      errorCount: 0,
      errorsSinceLastSuccess: row.errors_since_last_success,
      lastRequestAt: row.last_request_at,
      enabled: row.enabled,
      disabledReason: row.disabled_reason ?? null,
    },
    attempts,
    disableAfterFailures,
  );
}
