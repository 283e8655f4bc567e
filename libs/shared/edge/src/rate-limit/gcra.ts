/**
 * GCRA (generic cell rate algorithm), the token bucket expressed as one timestamp: the
 * theoretical arrival time (TAT) of the next request. `periodMs` = 1000 / rate; a request is let
 * through while the new TAT stays within `burst` periods of now.
 */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

export interface GcraDecision {
  allowed: boolean;
  /** The TAT to keep (unchanged when denied). */
  tatMs: number;
  /** Until a request would be let through (0 when allowed). */
  retryAfterMs: number;
}

export function periodMs(limit: RateLimit): number {
  return 1000 / limit.perSecond;
}

export function gcraDecide(
  tatMs: number | undefined,
  nowMs: number,
  limit: RateLimit,
): GcraDecision {
  const period = periodMs(limit);
  const nextTat = Math.max(tatMs ?? nowMs, nowMs) + period;
  const allowedUntil = nowMs + limit.burst * period;
  if (nextTat <= allowedUntil) return { allowed: true, tatMs: nextTat, retryAfterMs: 0 };
  return { allowed: false, tatMs: tatMs ?? nowMs, retryAfterMs: nextTat - allowedUntil };
}

/** `Retry-After` in whole seconds, at least 1 (the header takes a positive integer). */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}
