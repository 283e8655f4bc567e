import { Agent } from 'node:https';

import { type LoadRequest, percentile, sendTrusted, type TrustedResponse } from './load';

/**
 * Open-loop load: requests start on a fixed schedule (`ratePerSecond`) whatever the answers do,
 * and each latency runs from the request's scheduled start to its answer, so a slow answer cannot
 * hold the next requests back and hide its own queueing (no coordinated omission). Connections
 * are kept alive and opened as needed, up to `maxInFlight` requests at once; a request whose turn
 * comes while that many are in flight is not sent and counted as `skipped` (the target is
 * overloaded).
 */
export interface OpenLoopRun {
  target: { baseUrl: string; ca: string };
  ratePerSecond: number;
  /** How many requests are scheduled (the run lasts about count ÷ rate seconds). */
  count: number;
  /**
   * Requests sent first on the same schedule, answers checked but latencies not kept: the
   * client's connections are opened (TLS handshakes) and its code compiled before the measured
   * ones. None by default.
   */
  warmupCount?: number;
  next: () => LoadRequest;
  /** Checks an answer: null when as expected, otherwise what is wrong. */
  check: (response: TrustedResponse, request: LoadRequest) => string | null;
  maxInFlight: number;
  signal: AbortSignal;
}

export interface OpenLoopSample {
  ratePerSecond: number;
  scheduled: number;
  answered: number;
  skipped: number;
  failed: number;
  firstFailure: string | null;
  /** Seconds from the first scheduled start to the last answer. */
  durationSeconds: number;
  /** Scheduled start → answer, of each answered request (ms). */
  latenciesMs: number[];
}

/** After the last scheduled start, answers still missing after this long fail the run. */
const DRAIN_LIMIT_MS = 30_000;
const TICK_MS = 2;

export async function runOpenLoop(run: OpenLoopRun): Promise<OpenLoopSample> {
  const agent = new Agent({ keepAlive: true, maxSockets: run.maxInFlight, ca: run.target.ca });
  const intervalMs = 1000 / run.ratePerSecond;
  const latenciesMs: number[] = [];
  const pending = new Set<Promise<void>>();
  let skipped = 0;
  let failed = 0;
  let firstFailure: string | null = null;
  const fail = (problem: string) => {
    failed++;
    firstFailure ??= problem;
  };
  const warmupCount = run.warmupCount ?? 0;
  const startedAt = performance.now();
  let lastAnswerAt = startedAt;
  try {
    for (let index = 0; index < warmupCount + run.count; index++) {
      run.signal.throwIfAborted();
      const scheduledAt = startedAt + index * intervalMs;
      const wait = scheduledAt - performance.now();
      if (wait > TICK_MS) await new Promise((resolve) => setTimeout(resolve, wait));
      if (pending.size >= run.maxInFlight) {
        skipped++;
        continue;
      }
      // A request started up to TICK_MS early is timed from its start, so no latency is negative.
      const timedFrom = Math.min(scheduledAt, performance.now());
      const request = run.next();
      const measured = index >= warmupCount;
      const sent = sendTrusted(run.target, request, agent).then(
        (response) => {
          lastAnswerAt = performance.now();
          const problem = run.check(response, request);
          if (problem !== null) fail(problem);
          else if (measured) latenciesMs.push(lastAnswerAt - timedFrom);
        },
        (error: unknown) => fail(error instanceof Error ? error.message : String(error)),
      );
      const tracked = sent.finally(() => pending.delete(tracked));
      pending.add(tracked);
    }
    const drained = Promise.all(pending).then(() => true);
    const limit = new Promise<false>((resolve) => {
      setTimeout(() => resolve(false), DRAIN_LIMIT_MS).unref();
    });
    if (!(await Promise.race([drained, limit]))) {
      fail(`${pending.size} requests unanswered ${DRAIN_LIMIT_MS} ms after the last start`);
    }
  } finally {
    agent.destroy();
  }
  return {
    ratePerSecond: run.ratePerSecond,
    scheduled: run.count,
    answered: latenciesMs.length,
    skipped,
    failed,
    firstFailure,
    durationSeconds: (lastAnswerAt - startedAt) / 1000 - warmupCount / run.ratePerSecond,
    latenciesMs,
  };
}

/** What a latency target reports of its open-loop run. */
export interface OpenLoopLatency {
  ratePerSecond: number;
  skipped: number;
  failed: number;
  firstFailure: string | null;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
}

/** The run's figures with the percentiles of `latenciesMs` (the run's own, or others). */
export function openLoopLatency(
  sample: OpenLoopSample,
  latenciesMs: readonly number[],
): OpenLoopLatency {
  return {
    ratePerSecond: sample.ratePerSecond,
    skipped: sample.skipped,
    failed: sample.failed,
    firstFailure: sample.firstFailure,
    latencyP50Ms: percentile(latenciesMs, 0.5),
    latencyP99Ms: percentile(latenciesMs, 0.99),
    latencyMaxMs: latenciesMs.length === 0 ? NaN : Math.max(...latenciesMs),
  };
}
