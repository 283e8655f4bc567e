import { gcraDecide, type GcraDecision, periodMs, type RateLimit } from './gcra';

/** Buckets idle longer than this are forgotten (they would be full again anyway). */
const IDLE_EVICTION_MS = 60_000;
const MAX_BUCKETS = 100_000;

/** One bucket's traffic on one replica during one report period. */
export interface ReportedBucket {
  limitClass: string;
  accountId: string;
  /** Requests let through. */
  admitted: number;
  /** Requests received, let through or not. */
  demanded: number;
}

/** What a replica tells the others every report period; also its heartbeat. */
export interface ReplicaReport {
  replicaId: string;
  buckets: ReportedBucket[];
}

export interface ReplicatedRateLimiterOptions<Class extends string> {
  replicaId: string;
  limits: Record<Class, RateLimit>;
  /** How often every replica reports (the same setting on all of them). */
  reportIntervalMs: number;
  /** A replica not heard from for this long is no longer counted. */
  peerExpiryMs: number;
}

interface Bucket {
  limit: RateLimit;
  /** GCRA TAT of the whole account's bucket: this replica's requests and the peers' reported ones. */
  globalTatMs: number | undefined;
  /** Tokens of this replica's share in use, as of `shareUpdatedMs`. */
  shareLevel: number;
  shareUpdatedMs: number;
  /** The report period `admitted` and `demanded` belong to. */
  period: number;
  admitted: number;
  demanded: number;
  /** What this replica received in the period before `period`. */
  previousDemanded: number;
  /** When requests started arriving here after a period without any. */
  activeSinceMs: number;
  lastUsedMs: number;
}

interface Peer {
  heardMs: number;
  /** Requests received in its last report period, by bucket key. */
  demanded: Map<string, number>;
}

const bucketKey = (limitClass: string, accountId: string) => `${limitClass}:${accountId}`;

/**
 * Per-account limits held by every replica together, decided in memory: no network round trip
 * per request. Each replica reports what each account used on it, every period, to the others
 * (the report doubles as a heartbeat). A request is let through when both gates allow it:
 *
 * - the account's whole bucket (GCRA at the full limit) as this replica sees it: its own requests
 *   at once, the peers' when their report arrives (one period late at most);
 * - this replica's share of that bucket (a token bucket at share × rate, burst share × burst,
 *   at least one token), the share being the replica's part of the account's requests in the last
 *   period. Shares add up to about 1, so replicas cannot spend the same tokens during the period
 *   their reports are on the way. An account with no recent requests is shared equally; a
 *   replica that received none gets a floor of 1/(2N), so its first request is not refused.
 *
 * Traffic all on one replica gets the whole limit one period after it starts (the first period
 * lets through burst/N at once); traffic spread over replicas gets its split. With no peer heard
 * (alone, or NATS down) the replica enforces the full limits on its own.
 */
export class ReplicatedRateLimiter<Class extends string> {
  private readonly buckets = new Map<string, Bucket>();
  private readonly peers = new Map<string, Peer>();
  /** Keys of the buckets used in the current period. */
  private active = new Set<string>();
  private period = 0;

  constructor(private readonly options: ReplicatedRateLimiterOptions<Class>) {}

  take(accountId: string, limitClass: Class, nowMs = Date.now()): GcraDecision {
    const key = bucketKey(limitClass, accountId);
    const bucket = this.bucket(key, limitClass, nowMs);
    if (!bucket) throw new Error(`no rate limit for class ${limitClass}`);
    this.startPeriod(bucket, nowMs);
    bucket.demanded += 1;
    this.active.add(key);
    const share = this.shareOf(bucket, key, nowMs);
    const { limit } = bucket;
    const level = Math.max(
      0,
      bucket.shareLevel - (share * limit.perSecond * (nowMs - bucket.shareUpdatedMs)) / 1000,
    );
    const capacity = Math.max(1, share * limit.burst);
    const global = gcraDecide(bucket.globalTatMs, nowMs, limit);
    bucket.shareLevel = level;
    bucket.shareUpdatedMs = nowMs;
    if (global.allowed && level + 1 <= capacity) {
      bucket.shareLevel = level + 1;
      bucket.globalTatMs = global.tatMs;
      bucket.admitted += 1;
      return global;
    }
    const shareWaitMs = ((level + 1 - capacity) * 1000) / (share * limit.perSecond);
    return {
      allowed: false,
      tatMs: bucket.globalTatMs ?? nowMs,
      retryAfterMs: Math.max(global.retryAfterMs, shareWaitMs),
    };
  }

  /** This replica's traffic since the last report, for the peers; starts the next period. */
  report(nowMs = Date.now()): ReplicaReport {
    const buckets: ReportedBucket[] = [];
    for (const key of this.active) {
      const bucket = this.buckets.get(key);
      if (!bucket || bucket.period !== this.period) continue;
      const separator = key.indexOf(':');
      buckets.push({
        limitClass: key.slice(0, separator),
        accountId: key.slice(separator + 1),
        admitted: bucket.admitted,
        demanded: bucket.demanded,
      });
    }
    this.active = new Set();
    this.period += 1;
    this.forgetSilentPeers(nowMs);
    return { replicaId: this.options.replicaId, buckets };
  }

  /** A peer's report: its requests count against the accounts' buckets here too. */
  receive(report: ReplicaReport, nowMs = Date.now()): void {
    if (report.replicaId === this.options.replicaId) return;
    const demanded = new Map<string, number>();
    for (const reported of report.buckets) {
      const key = bucketKey(reported.limitClass, reported.accountId);
      demanded.set(key, reported.demanded);
      const bucket = this.bucket(key, reported.limitClass, nowMs);
      if (!bucket || reported.admitted <= 0) continue;
      const start = Math.max(bucket.globalTatMs ?? nowMs, nowMs);
      bucket.globalTatMs = start + reported.admitted * periodMs(bucket.limit);
    }
    this.peers.set(report.replicaId, { heardMs: nowMs, demanded });
  }

  /** This replica and the peers heard from within the expiry. */
  replicaCount(nowMs = Date.now()): number {
    this.forgetSilentPeers(nowMs);
    return 1 + this.peers.size;
  }

  get size(): number {
    return this.buckets.size;
  }

  private shareOf(bucket: Bucket, key: string, nowMs: number): number {
    const replicas = this.replicaCount(nowMs);
    if (replicas === 1) return 1;
    const equal = 1 / replicas;
    // Until every peer has reported on a period in which this account was active here, their
    // silence says nothing: the account is shared equally meanwhile.
    if (nowMs < bucket.activeSinceMs + 1.5 * this.options.reportIntervalMs) return equal;
    const own = bucket.previousDemanded;
    let total = own;
    for (const peer of this.peers.values()) total += peer.demanded.get(key) ?? 0;
    if (total === 0) return equal;
    return Math.max(own / total, equal / 2);
  }

  /** Moves the bucket's counters to the current period, keeping the last one's demand. */
  private startPeriod(bucket: Bucket, nowMs: number): void {
    if (bucket.period === this.period) return;
    bucket.previousDemanded = bucket.period === this.period - 1 ? bucket.demanded : 0;
    if (bucket.previousDemanded === 0) bucket.activeSinceMs = nowMs;
    bucket.admitted = 0;
    bucket.demanded = 0;
    bucket.period = this.period;
  }

  private bucket(key: string, limitClass: string, nowMs: number): Bucket | undefined {
    let bucket = this.buckets.get(key);
    if (bucket) {
      this.buckets.delete(key); // re-insert: Map order then tracks recency for eviction
    } else {
      const limit = (this.options.limits as Record<string, RateLimit | undefined>)[limitClass];
      if (!limit) return undefined;
      bucket = {
        limit,
        globalTatMs: undefined,
        shareLevel: 0,
        shareUpdatedMs: nowMs,
        period: this.period,
        admitted: 0,
        demanded: 0,
        previousDemanded: 0,
        activeSinceMs: nowMs,
        lastUsedMs: nowMs,
      };
    }
    bucket.lastUsedMs = nowMs;
    this.buckets.set(key, bucket);
    this.evict(nowMs);
    return bucket;
  }

  private evict(nowMs: number): void {
    for (const [key, bucket] of this.buckets) {
      if (this.buckets.size <= MAX_BUCKETS && bucket.lastUsedMs > nowMs - IDLE_EVICTION_MS) return;
      this.buckets.delete(key);
    }
  }

  private forgetSilentPeers(nowMs: number): void {
    for (const [replicaId, peer] of this.peers) {
      if (peer.heardMs <= nowMs - this.options.peerExpiryMs) this.peers.delete(replicaId);
    }
  }
}
