import { eventSubject } from '@envoi/contracts-core';
import type { RateLimit, ReplicaReport } from '@envoi/shared-edge';

/** One bucket's traffic on the reporting replica: class, account, admitted, demanded. */
type ReportedBucketTuple = [string, string, number, number];

/**
 * A gateway replica's rate-limit report (every RATE_LIMIT_SYNC_INTERVAL_MS, also its heartbeat).
 * Buckets travel as tuples: about 60 bytes each, so the default 1 MB NATS payload holds one
 * period's traffic of some 16 000 accounts.
 */
export interface RateLimitReported {
  replica_id: string;
  /** The limits the replica enforces: replicas configured differently ignore each other. */
  limits: string;
  buckets: ReportedBucketTuple[];
}

export const RATE_LIMIT_REPORTED = eventSubject<RateLimitReported>(
  'gateway.rate-limit.reported.v1',
);

/** The limits, as text two replicas compare: `general=100/200,statistics=1/1`. */
export function limitsFingerprint(limits: Record<string, RateLimit>): string {
  return Object.entries(limits)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([limitClass, limit]) => `${limitClass}=${limit.perSecond}/${limit.burst}`)
    .join(',');
}

export function toReportedEvent(report: ReplicaReport, limits: string): RateLimitReported {
  return {
    replica_id: report.replicaId,
    limits,
    buckets: report.buckets.map((bucket) => [
      bucket.limitClass,
      bucket.accountId,
      bucket.admitted,
      bucket.demanded,
    ]),
  };
}

/** The report in an event, or undefined when it is malformed. */
export function fromReportedEvent(event: RateLimitReported): ReplicaReport | undefined {
  if (typeof event.replica_id !== 'string' || !Array.isArray(event.buckets)) return undefined;
  const buckets = [];
  for (const tuple of event.buckets) {
    if (!Array.isArray(tuple)) return undefined;
    const [limitClass, accountId, admitted, demanded] = tuple;
    if (typeof limitClass !== 'string' || typeof accountId !== 'string') return undefined;
    if (!Number.isInteger(admitted) || !Number.isInteger(demanded)) return undefined;
    buckets.push({ limitClass, accountId, admitted, demanded });
  }
  return { replicaId: event.replica_id, buckets };
}
