import { percentile } from './load';

/**
 * What a benchmark's webhook receiver got: each (endpoint, webhook-id) pair counted once at its
 * first arrival, later copies counted as duplicates.
 */
export class WebhookReceipts {
  /** First arrival (ms, `performance.timeOrigin`-based) of each `endpoint webhook-id`. */
  private readonly firsts = new Map<string, number>();
  /** Arrival times in order, one per distinct delivery. */
  readonly arrivals: number[] = [];
  duplicates = 0;

  record(endpoint: string, webhookId: string, receivedAt: number): void {
    const key = `${endpoint} ${webhookId}`;
    if (this.firsts.has(key)) {
      this.duplicates++;
      return;
    }
    this.firsts.set(key, receivedAt);
    this.arrivals.push(receivedAt);
  }

  /** Distinct deliveries received so far. */
  get count(): number {
    return this.arrivals.length;
  }

  firstArrival(endpoint: string, webhookId: string): number | undefined {
    return this.firsts.get(`${endpoint} ${webhookId}`);
  }
}

/** Where each event went: the endpoints that must receive it. */
export interface ExpectedDelivery {
  eventId: string;
  endpoints: readonly string[];
  /** When the event was published (or scheduled to be), on the receipts' clock. */
  publishedAt: number;
}

export interface DeliveryLatencies {
  expected: number;
  received: number;
  missing: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Published → first arrival of every expected delivery (missing ones left out and counted). */
export function deliveryLatencies(
  receipts: WebhookReceipts,
  expected: readonly ExpectedDelivery[],
): DeliveryLatencies {
  const latencies: number[] = [];
  let total = 0;
  for (const { eventId, endpoints, publishedAt } of expected) {
    for (const endpoint of endpoints) {
      total++;
      const arrival = receipts.firstArrival(endpoint, eventId);
      if (arrival !== undefined) latencies.push(arrival - publishedAt);
    }
  }
  return {
    expected: total,
    received: latencies.length,
    missing: total - latencies.length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.length === 0 ? NaN : Math.max(...latencies),
  };
}

/** The first arrival of each expected delivery that arrived. */
export function arrivalTimes(
  receipts: WebhookReceipts,
  expected: readonly ExpectedDelivery[],
): number[] {
  return expected.flatMap(({ eventId, endpoints }) =>
    endpoints.flatMap((endpoint) => receipts.firstArrival(endpoint, eventId) ?? []),
  );
}

/** Deliveries per second from the first arrival to the last (NaN under two arrivals). */
export function arrivalsPerSecond(arrivals: readonly number[]): number {
  if (arrivals.length < 2) return NaN;
  const first = Math.min(...arrivals);
  const last = Math.max(...arrivals);
  return last > first ? ((arrivals.length - 1) * 1000) / (last - first) : NaN;
}

/** How long a run may take, and how long without a new arrival, before it is given up. */
export interface ArrivalLimits {
  runTimeoutMs: number;
  stallMs: number;
  pollMs: number;
}

/** Polls until every expected delivery arrived; throws past the limits or on abort. */
export async function waitForArrivals(
  receipts: WebhookReceipts,
  expected: readonly ExpectedDelivery[],
  limits: ArrivalLimits,
  signal: AbortSignal,
  what: string,
): Promise<void> {
  const wanted = expected.reduce((sum, entry) => sum + entry.endpoints.length, 0);
  const started = performance.now();
  let seen = -1;
  let lastProgress = started;
  for (;;) {
    signal.throwIfAborted();
    const arrived = arrivalTimes(receipts, expected).length;
    if (arrived >= wanted) return;
    const now = performance.now();
    if (arrived !== seen) {
      seen = arrived;
      lastProgress = now;
    }
    if (now - started > limits.runTimeoutMs || now - lastProgress > limits.stallMs) {
      throw new Error(`${what}: ${arrived} of ${wanted} deliveries arrived`);
    }
    await new Promise((resolve) => setTimeout(resolve, limits.pollMs));
  }
}
