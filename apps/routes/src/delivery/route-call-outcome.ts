import { type OutboundResult, retryDelayMs, type RetrySchedule } from '@envoi/shared-outbound';

import type { RouteCallOutcome } from './route-deliveries.repository';

/**
 * Any 2xx is a success (notes 2.8); anything else, redirects included, fails and is retried
 * n^4 × base later (±10 %), or given up once the attempts are spent.
 */
export function routeCallOutcome(
  result: OutboundResult,
  attempt: number,
  schedule: RetrySchedule,
  now: Date,
  random: () => number = Math.random,
): RouteCallOutcome {
  const status = result.type === 'response' ? result.status : null;
  const succeeded = status !== null && status >= 200 && status < 300;
  const delayMs = succeeded ? null : retryDelayMs(attempt, schedule, random);
  return {
    succeeded,
    nextAttemptAt: delayMs === null ? null : new Date(now.getTime() + delayMs),
    status,
    error: result.type === 'response' ? null : `${result.kind}: ${result.message}`,
  };
}
