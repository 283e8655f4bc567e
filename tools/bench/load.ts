import type { IncomingHttpHeaders } from 'node:http';
import { type Agent, request as httpsRequest } from 'node:https';

import autocannon from 'autocannon';

/** One HTTP request of a load case. */
export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** What every measured response must look like (checked on a trusted preflight request). */
export interface Expectation {
  status: number;
  /** Header values that must be present; `null`: the header must be absent. */
  headers?: Record<string, string | null>;
}

export interface LoadCase {
  name: string;
  /** Server under test: its HTTPS base URL and the CA (PEM) its certificate must chain to. */
  target: { name: string; baseUrl: string; ca: string };
  /** A fixed request, or a function building the next one (unique keys, unique emails). */
  request: LoadRequest | (() => LoadRequest);
  expect: Expectation;
  /**
   * Checks one response's status and body (every measured response, and both preflight ones):
   * null when it is as expected, otherwise what is wrong. Without it only statuses are counted.
   */
  checkResponse?: (status: number, body: string) => string | null;
}

/** One closed-loop run: counts and every response time (ms, sub-millisecond precision). */
export interface LoadSample {
  connections: number;
  durationSeconds: number;
  /** Responses received per second over the run. */
  requestsPerSecond: number;
  responses: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Responses `checkResponse` found wrong (0 without a check), and the first problem found. */
  failedChecks: number;
  firstFailedCheck: string | null;
  latenciesMs: Float64Array;
}

/**
 * A closed-loop run for a duration, or of a fixed `amount` of requests (spread over the
 * connections, at least one each): that run ends with the last answer, so no request is cut off,
 * and its duration is measured from the start to that answer.
 */
export type LoadRun = { connections: number; signal: AbortSignal } & (
  { durationSeconds: number } | { amount: number }
);

/** An `amount` run is stopped after this long whatever it has left (a bound, never expected). */
const AMOUNT_RUN_LIMIT_MS = 120_000;

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

export function nextRequest(loadCase: LoadCase): LoadRequest {
  return typeof loadCase.request === 'function' ? loadCase.request() : loadCase.request;
}

export interface TrustedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request over a verified TLS connection (the target's CA, hostname 127.0.0.1): a new one, or
 * one of `agent`'s (which must carry the same CA).
 */
export function sendTrusted(
  target: { baseUrl: string; ca: string },
  request: LoadRequest,
  agent?: Agent,
): Promise<TrustedResponse> {
  const url = new URL(request.path, target.baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpsRequest(
      url,
      {
        method: request.method,
        headers: request.headers,
        ca: target.ca,
        agent: agent ?? false,
        timeout: 10_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${url.href} timed out`)));
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

function mismatch(response: TrustedResponse, expect: Expectation): string | null {
  if (response.status !== expect.status) {
    return `status ${response.status} (expected ${expect.status}): ${response.body.slice(0, 200)}`;
  }
  for (const [name, value] of Object.entries(expect.headers ?? {})) {
    const actual = response.headers[name];
    if (value === null ? actual !== undefined : actual !== value) {
      return `header ${name}: ${String(actual)} (expected ${value ?? 'absent'})`;
    }
  }
  return null;
}

/**
 * Two requests of the case over a TLS connection that verifies the certificate (autocannon 9
 * connects with `rejectUnauthorized: false` whatever `tlsOptions` say, see its
 * lib/httpClient.js). The first must have the expected status (a replay case's first request is
 * the original execution), the second must match the expectation fully; both must pass the case's
 * `checkResponse`.
 */
export async function preflight(loadCase: LoadCase): Promise<void> {
  const first = await sendTrusted(loadCase.target, nextRequest(loadCase));
  if (first.status !== loadCase.expect.status) {
    throw new Error(`${loadCase.name}: first request: ${mismatch(first, loadCase.expect)}`);
  }
  const firstCheck = loadCase.checkResponse?.(first.status, first.body) ?? null;
  if (firstCheck !== null) throw new Error(`${loadCase.name}: first request: ${firstCheck}`);
  const second = await sendTrusted(loadCase.target, nextRequest(loadCase));
  const problem =
    mismatch(second, loadCase.expect) ??
    loadCase.checkResponse?.(second.status, second.body) ??
    null;
  if (problem !== null) throw new Error(`${loadCase.name}: ${problem}`);
}

function toAutocannonRequest(request: LoadRequest): autocannon.Request {
  return {
    method: request.method,
    path: request.path,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  };
}

/** Counts the responses `checkResponse` rejects (autocannon hands each response's body to it). */
class ResponseChecks {
  failed = 0;
  firstFailure: string | null = null;

  constructor(private readonly check: (status: number, body: string) => string | null) {}

  readonly onResponse = (status: number, body: string): void => {
    const problem = this.check(status, body);
    if (problem === null) return;
    this.failed += 1;
    this.firstFailure ??= problem;
  };
}

/**
 * Closed-loop load: `connections` keep one request in flight each for `durationSeconds` (or until
 * `amount` requests are answered). Latencies come from autocannon's `response` events
 * (autocannon's own histogram keeps whole milliseconds, too coarse for sub-millisecond
 * differences).
 */
export function runLoad(loadCase: LoadCase, run: LoadRun): Promise<LoadSample> {
  const source = loadCase.request;
  const checks = loadCase.checkResponse ? new ResponseChecks(loadCase.checkResponse) : undefined;
  const onResponse = checks ? { onResponse: checks.onResponse } : {};
  const requests: autocannon.Request[] =
    typeof source === 'function'
      ? [
          {
            setupRequest: (request) => ({ ...request, ...toAutocannonRequest(source()) }),
            ...onResponse,
          },
        ]
      : [{ ...toAutocannonRequest(source), ...onResponse }];
  return new Promise((resolve, reject) => {
    if (run.signal.aborted) {
      reject(abortReason(run.signal));
      return;
    }
    let latencies = new Float64Array(65_536);
    let count = 0;
    const onAbort = () => instance.stop();
    const startedAt = performance.now();
    let lastResponseAt = startedAt;
    const byAmount = 'amount' in run;
    // autocannon notices the end of an `amount` run at its next 1 s tick: time it ourselves.
    const limit = byAmount ? setTimeout(() => instance.stop(), AMOUNT_RUN_LIMIT_MS) : undefined;
    const instance = autocannon(
      {
        url: loadCase.target.baseUrl,
        connections: run.connections,
        ...(byAmount ? { amount: run.amount } : { duration: run.durationSeconds }),
        timeout: 10,
        // Passed for completeness; autocannon 9 does not verify certificates (see preflight).
        tlsOptions: { ca: loadCase.target.ca },
        requests,
      },
      (error: unknown, result: autocannon.Result) => {
        run.signal.removeEventListener('abort', onAbort);
        clearTimeout(limit);
        if (error) {
          reject(error instanceof Error ? error : new Error('autocannon failed'));
          return;
        }
        if (run.signal.aborted) {
          reject(abortReason(run.signal));
          return;
        }
        const durationSeconds = byAmount ? (lastResponseAt - startedAt) / 1000 : result.duration;
        resolve({
          connections: run.connections,
          durationSeconds,
          requestsPerSecond: result.requests.total / durationSeconds,
          responses: result.requests.total,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          failedChecks: checks?.failed ?? 0,
          firstFailedCheck: checks?.firstFailure ?? null,
          latenciesMs: latencies.slice(0, count),
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count] = responseTimeMs;
      count += 1;
      lastResponseAt = performance.now();
    });
    run.signal.addEventListener('abort', onAbort, { once: true });
  });
}

export interface LatencySummary {
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

/** Mean and nearest-rank percentiles of the response times of several runs together. */
export function summariseLatencies(samples: readonly LoadSample[]): LatencySummary {
  const total = samples.reduce((sum, sample) => sum + sample.latenciesMs.length, 0);
  const all = new Float64Array(total);
  let offset = 0;
  for (const sample of samples) {
    all.set(sample.latenciesMs, offset);
    offset += sample.latenciesMs.length;
  }
  all.sort();
  const rank = (quantile: number) => all[Math.max(0, Math.ceil(quantile * total) - 1)] ?? NaN;
  return {
    meanMs: total === 0 ? NaN : all.reduce((sum, value) => sum + value, 0) / total,
    p50Ms: rank(0.5),
    p99Ms: rank(0.99),
  };
}

/** Nearest-rank percentile of unsorted values (NaN when empty). */
export function percentile(values: readonly number[], quantile: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(quantile * sorted.length) - 1)] ?? NaN;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? NaN)
    : ((sorted[middle - 1] ?? NaN) + (sorted[middle] ?? NaN)) / 2;
}
