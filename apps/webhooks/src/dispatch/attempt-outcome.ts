import { retryDelayMs, type RetrySchedule } from '@envoi/shared-outbound';

import type { DeliveryState } from './webhook-delivery.entity';
import { isResponse, type TransportResult } from './webhook-transport';

/** What an attempt's result means for its delivery. */
export interface AttemptOutcome {
  state: DeliveryState;
  nextAttemptAt: Date | null;
  succeeded: boolean;
  /** 410 Gone: the endpoint asks not to be called again. */
  gone: boolean;
  responseStatus: number | null;
  error: string | null;
  responseBody: string;
  durationMs: number;
}

const GONE = 410;

/**
 * Any 2xx is a success; anything else (3xx included: redirects are not followed) fails and is
 * retried on the schedule, or given up once the attempts are spent or the endpoint is gone.
 */
export function attemptOutcome(
  result: TransportResult,
  attempt: number,
  schedule: RetrySchedule,
  now: Date,
  random: () => number = Math.random,
): AttemptOutcome {
  const response = isResponse(result) ? result : null;
  const status = response?.status ?? null;
  const succeeded = status !== null && status >= 200 && status < 300;
  const gone = status === GONE;
  const delayMs = succeeded || gone ? null : retryDelayMs(attempt, schedule, random);
  return {
    state: succeeded ? 'delivered' : delayMs === null ? 'given_up' : 'pending',
    nextAttemptAt: delayMs === null ? null : new Date(now.getTime() + delayMs),
    succeeded,
    gone,
    responseStatus: status,
    error: isResponse(result) ? null : result.error,
    responseBody: response?.bodyPrefix ?? '',
    durationMs: result.durationMs,
  };
}
