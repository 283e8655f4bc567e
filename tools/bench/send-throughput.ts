import 'reflect-metadata';

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';

import { DELIVERY_STREAM } from '@envoi/contracts-core';
import { connectNats } from '@envoi/shared-nats';

import { createVerifiedDomain, startPlatformWithDns } from './bench-domain';
import { createBenchAccount, platformGateway, startBareAccept } from './bench-platform';
import { runBenchmark } from './bench-run';
import { waitForEventConsumers } from './consumer-backlog';
import {
  type LoadSample,
  median,
  nextRequest,
  preflight,
  runLoad,
  summariseLatencies,
} from './load';
import { type OpenLoopLatency, openLoopLatency, runOpenLoop } from './open-loop';
import { cpuBetween, OTHER_PROCESSES, ProcessCpu } from './process-cpu';
import { memoryLines, StackMemory } from './process-memory';
import {
  type AnsweredIds,
  contentBytes,
  defineSendCases,
  type SendCase,
  type SendCaseId,
} from './send-cases';
import { type EnvoiStorage, SendDatabase, type StoredCheck } from './send-database';
import { atLeast, below, targetLines, type TargetResult } from './targets';

/**
 * `npm run bench:send` (issue 5): accepted messages per second and latency of
 * `POST /v2/accounts/{id}/messages` with 1 and 100 recipients, next to a bare accept path (HTTP →
 * NATS request → one multi-row INSERT → reply, bare-accept.ts) measured in the same run, then
 * whether the database holds exactly the accepted messages and whether the outbox relay kept up.
 * Cases are measured in interleaved rounds so that a burst of unrelated load on the (shared)
 * machine spreads over all of them; the CPU time of every process (process-cpu.ts) says where
 * each request's time went. The sending domain verifies against a loopback DNS server; the
 * delivery service is stopped, so only accepting is measured.
 */

const SETTINGS = {
  /** Closed-loop connections: each keeps one request in flight. */
  connectionLevels: [10, 20],
  /** Warm-up per case (at the first level), which also estimates the case's rate. */
  warmupSeconds: 1,
  rounds: 3,
  /**
   * Every run is a fixed number of requests, all answered before it ends (none cut off, so the
   * database must hold exactly the answered messages): about `secondsPerRun` at the case's last
   * measured rate, and at least `minRequestsPerConnection` per connection (slow cases run longer).
   */
  secondsPerRun: 2,
  minRequestsPerConnection: 2,
  /** After each run, how long the relay may take to publish what the run left in the outbox. */
  relayWaitMs: 15_000,
  finalRelayWaitMs: 30_000,
  /**
   * The relay's pause when no send woke it (default 1 000 ms). Under load every send wakes it,
   * so this only shortens the drain between runs: at the default an idle relay publishes at most
   * 10 batches of 100 rows per second.
   */
  relayIntervalMs: 100,
  /**
   * The latency target's run: 1-recipient sends at half of the peak rate measured above, started
   * on a fixed schedule (open loop) for about this long, at most this many in flight.
   */
  halfLoadSeconds: 8,
  /**
   * Sent at the same rate before those, not timed: the client's new connections (TLS handshakes
   * at both ends) stalled the first half second's requests up to 120 ms.
   */
  halfLoadWarmupSeconds: 1,
  halfLoadMaxInFlight: 200,
  /** How long the half-load run waits at most for the event consumers to catch up first. */
  consumersCatchUpMs: 30_000,
} as const;

/** Issue 13's targets for accepting. */
const TARGETS = {
  acceptedPerSecond100: 10_000,
  ratioToBare100: 0.4,
  ratioToBare1: 0.25,
  halfLoadP99Ms1: 50,
  /** How far behind the outbox relay may be at full load (issue 13: one second of work). */
  relayLagMs: 1_000,
} as const;

interface RelayAfterRun {
  /** Unpublished outbox rows when the run ended. */
  backlog: number;
  /** How long the oldest of them had waited then: how far the relay was behind. */
  lagMs: number;
  /** How long the relay then took to publish them (null: not within the wait). */
  drainMs: number | null;
}

interface RunRecord {
  sample: LoadSample;
  /** CPU ms by process during the run, then while the relay drained what it left. */
  cpuRun: Record<string, number> | null;
  cpuDrain: Record<string, number> | null;
  relay: RelayAfterRun;
}

interface Figures {
  connections: number;
  /** Medians over the rounds. */
  requestsPerSecond: number;
  acceptedPerSecond: number;
  /** Accepted messages per second of run plus relay drain: accepted and published. */
  publishedPerSecond: number | null;
  requestsPerSecondByRound: number[];
  /** Over every response of every round. */
  latencyMeanMs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  responses: number;
  failedResponses: number;
  firstFailure: string | null;
  errors: number;
  timeouts: number;
  /**
   * CPU ms per answered request by process, run and drain together (the whole cost of accepting
   * and publishing), and the drain's part alone (the relay's catching up). Null without /proc.
   */
  cpuMsPerRequest: Record<string, number> | null;
  drainCpuMsPerRequest: Record<string, number> | null;
  /** Cores each process kept busy during the runs (CPU ms ÷ run ms); shows a saturated loop. */
  coresBusy: Record<string, number> | null;
  relay: RelayAfterRun[];
  /** Each run (in round order): requests, seconds, CPU ms by process during it and its drain. */
  runs: Array<{
    requests: number;
    seconds: number;
    cpuMsRun: Record<string, number> | null;
    cpuMsDrain: Record<string, number> | null;
  }>;
}

interface CaseResult {
  id: SendCaseId;
  name: string;
  system: 'envoi' | 'bare';
  recipients: number;
  /** Requests per second the warm-up measured (sizes the runs). */
  warmupRequestsPerSecond: number;
  byConnections: Figures[];
  /** Accepted messages/s ÷ the bare case's, per connection level. */
  ratioToBare: number[] | null;
  problems: string[];
}

function perRequest(
  spent: ReadonlyArray<Record<string, number> | null>,
  requests: number,
): Record<string, number> | null {
  if (spent.some((entry) => entry === null) || requests === 0) return null;
  const total: Record<string, number> = {};
  for (const entry of spent) {
    for (const [label, ms] of Object.entries(entry ?? {})) total[label] = (total[label] ?? 0) + ms;
  }
  const divided: Record<string, number> = {};
  for (const [label, ms] of Object.entries(total).sort((a, b) => b[1] - a[1])) {
    divided[label] = Number((ms / requests).toFixed(3));
  }
  return divided;
}

function figures(records: readonly RunRecord[], recipients: number): Figures {
  const samples = records.map((record) => record.sample);
  const latency = summariseLatencies(samples);
  const sum = (pick: (sample: LoadSample) => number) =>
    samples.reduce((total, sample) => total + pick(sample), 0);
  const accepted = (sample: LoadSample) => (sample.responses - sample.failedChecks) * recipients;
  const drained = records.every((record) => record.relay.drainMs !== null);
  const answered = sum((sample) => sample.responses - sample.failedChecks);
  return {
    connections: samples[0]?.connections ?? 0,
    requestsPerSecond: median(samples.map((sample) => sample.requestsPerSecond)),
    acceptedPerSecond: median(samples.map((sample) => accepted(sample) / sample.durationSeconds)),
    publishedPerSecond: drained
      ? median(
          records.map(
            (record) =>
              accepted(record.sample) /
              (record.sample.durationSeconds + (record.relay.drainMs ?? 0) / 1000),
          ),
        )
      : null,
    requestsPerSecondByRound: samples.map(
      (sample) => Math.round(sample.requestsPerSecond * 10) / 10,
    ),
    latencyMeanMs: latency.meanMs,
    latencyP50Ms: latency.p50Ms,
    latencyP99Ms: latency.p99Ms,
    responses: sum((sample) => sample.responses),
    failedResponses: sum((sample) => sample.failedChecks),
    firstFailure: samples.find((sample) => sample.firstFailedCheck)?.firstFailedCheck ?? null,
    errors: sum((sample) => sample.errors),
    timeouts: sum((sample) => sample.timeouts),
    coresBusy: coresBusy(records),
    cpuMsPerRequest: perRequest(
      records.flatMap((record) => [record.cpuRun, record.cpuDrain]),
      answered,
    ),
    drainCpuMsPerRequest: perRequest(
      records.map((record) => record.cpuDrain),
      answered,
    ),
    relay: records.map((record) => record.relay),
    runs: records.map((record) => ({
      requests: record.sample.responses,
      seconds: Number(record.sample.durationSeconds.toFixed(3)),
      cpuMsRun: roundedValues(record.cpuRun),
      cpuMsDrain: roundedValues(record.cpuDrain),
    })),
  };
}

function coresBusy(records: readonly RunRecord[]): Record<string, number> | null {
  const runMs = records.reduce((sum, record) => sum + record.sample.durationSeconds * 1000, 0);
  const perRun = perRequest(
    records.map((record) => record.cpuRun),
    1,
  );
  if (!perRun || runMs === 0) return null;
  return Object.fromEntries(
    Object.entries(perRun).map(([label, ms]) => [label, Number((ms / runMs).toFixed(2))]),
  );
}

function roundedValues(entries: Record<string, number> | null): Record<string, number> | null {
  if (!entries) return null;
  return Object.fromEntries(
    Object.entries(entries).map(([key, value]) => [key, Math.round(value)]),
  );
}

function problemsOf(measured: Figures): string[] {
  const label = `${measured.connections} conn`;
  const problems: string[] = [];
  if (measured.failedResponses > 0) {
    problems.push(
      `${label}: ${measured.failedResponses} responses not accepted, first: ${measured.firstFailure ?? '?'}`,
    );
  }
  if (measured.errors > 0) problems.push(`${label}: ${measured.errors} connection errors`);
  if (measured.timeouts > 0) problems.push(`${label}: ${measured.timeouts} timeouts`);
  if (measured.responses === 0) problems.push(`${label}: no responses`);
  if (measured.relay.some((relay) => relay.drainMs === null)) {
    problems.push(
      `${label}: the relay did not publish a run's rows within ${SETTINGS.relayWaitMs} ms`,
    );
  }
  return problems;
}

const integer = (value: number) => Math.round(value).toLocaleString('en-US').replace(/,/g, ' ');
const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

const TABLE_HEADER = [
  'case'.padEnd(36),
  'conn'.padStart(4),
  'req/s'.padStart(7),
  'msg/s'.padStart(7),
  '×bare'.padStart(6),
  'p50'.padStart(6),
  'p99'.padStart(6),
  'mean'.padStart(6),
  'n'.padStart(6),
  '│ outbox left, behind by, drained in │ msg/s incl. drain',
].join(' ');

function figureLines(result: CaseResult): string[] {
  return result.byConnections.map((measured, index) => {
    const ratio = result.ratioToBare?.[index];
    const backlog = Math.max(...measured.relay.map((relay) => relay.backlog));
    const behind = Math.max(...measured.relay.map((relay) => relay.lagMs));
    const drains = measured.relay.map((relay) => relay.drainMs);
    const slowest = drains.includes(null) ? null : Math.max(...(drains as number[]));
    const relay =
      result.system === 'bare'
        ? ''
        : `│ ≤ ${integer(backlog)} rows, ≤ ${integer(behind)} ms, ${slowest === null ? 'NOT DRAINED' : `≤ ${integer(slowest)} ms`} │ ${measured.publishedPerSecond === null ? '' : integer(measured.publishedPerSecond)}`;
    return [
      `${result.system}: ${result.name}`.padEnd(36),
      String(measured.connections).padStart(4),
      integer(measured.requestsPerSecond).padStart(7),
      integer(measured.acceptedPerSecond).padStart(7),
      (ratio === undefined ? '' : ratio.toFixed(3)).padStart(6),
      ms(measured.latencyP50Ms).padStart(6),
      ms(measured.latencyP99Ms).padStart(6),
      ms(measured.latencyMeanMs).padStart(6),
      String(measured.responses).padStart(6),
      relay,
    ].join(' ');
  });
}

const WARMUP_MAX_STEPS = 4;

/** Requests of one run at `connections`, from the case's last measured rate. */
function amountFor(rate: number, connections: number): number {
  const floor = connections * SETTINGS.minRequestsPerConnection;
  return Math.max(floor, Math.min(100_000, Math.round(rate * SETTINGS.secondsPerRun)));
}

/**
 * Preflight and warm-up of every case (two runs: a short one to estimate the rate, then about
 * `warmupSeconds`), then interleaved rounds: in each round, every connection level of every case.
 * After each run the relay gets up to `relayWaitMs` to publish what the run left, so that no run
 * pays for the previous one's backlog.
 */
async function measureAll(
  cases: readonly SendCase[],
  database: SendDatabase,
  cpu: ProcessCpu,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<{ rates: Map<SendCaseId, number>; runs: Map<string, RunRecord[]> }> {
  const rates = new Map<SendCaseId, number>();
  const warmupConnections: number = SETTINGS.connectionLevels[0];
  for (const sendCase of cases) {
    signal.throwIfAborted();
    await preflight(sendCase);
    // One request per connection, then runs of about half the warm-up time at the rate measured
    // so far, until the warm-up time is spent.
    let amount = warmupConnections;
    let warmedSeconds = 0;
    for (let step = 0; step < WARMUP_MAX_STEPS && warmedSeconds < SETTINGS.warmupSeconds; step++) {
      const sample = await runLoad(sendCase, { connections: warmupConnections, amount, signal });
      rates.set(sendCase.id, sample.requestsPerSecond);
      warmedSeconds += sample.durationSeconds;
      amount = Math.max(
        warmupConnections,
        Math.round((sample.requestsPerSecond * SETTINGS.warmupSeconds) / 2),
      );
      await database.waitForRelay(SETTINGS.relayWaitMs, signal);
    }
    log(
      `warmed up ${sendCase.target.system}: ${sendCase.name} (${integer(rates.get(sendCase.id) ?? 0)} req/s)`,
    );
  }
  const runs = new Map<string, RunRecord[]>();
  for (let round = 1; round <= SETTINGS.rounds; round += 1) {
    log(`round ${round}/${SETTINGS.rounds}`);
    for (const connections of SETTINGS.connectionLevels) {
      for (const sendCase of cases) {
        const key = `${sendCase.id}@${connections}`;
        // The rate of this case's previous run at this level, or the warm-up's.
        const previous = runs.get(key)?.at(-1)?.sample.requestsPerSecond;
        const amount = amountFor(previous ?? rates.get(sendCase.id) ?? 0, connections);
        const before = cpu.snapshot();
        const sample = await runLoad(sendCase, { connections, amount, signal });
        const ended = cpu.snapshot();
        const relay = await database.waitForRelay(SETTINGS.relayWaitMs, signal);
        runs.set(key, [
          ...(runs.get(key) ?? []),
          {
            sample,
            cpuRun: cpuBetween(before, ended),
            cpuDrain: cpuBetween(ended, cpu.snapshot()),
            relay: { backlog: relay.backlog, lagMs: relay.lagMs, drainMs: relay.drainMs },
          },
        ]);
      }
    }
  }
  return { rates, runs };
}

function results(
  cases: readonly SendCase[],
  measured: { rates: Map<SendCaseId, number>; runs: Map<string, RunRecord[]> },
): Map<SendCaseId, CaseResult> {
  const all = new Map<SendCaseId, CaseResult>();
  for (const sendCase of cases) {
    const byConnections = SETTINGS.connectionLevels.map((connections) =>
      figures(measured.runs.get(`${sendCase.id}@${connections}`) ?? [], sendCase.recipients),
    );
    const bare = sendCase.bare === null ? undefined : all.get(sendCase.bare);
    all.set(sendCase.id, {
      id: sendCase.id,
      name: sendCase.name,
      system: sendCase.target.system,
      recipients: sendCase.recipients,
      warmupRequestsPerSecond: measured.rates.get(sendCase.id) ?? NaN,
      byConnections,
      ratioToBare: bare
        ? byConnections.map(
            (own, index) =>
              own.acceptedPerSecond / (bare.byConnections[index]?.acceptedPerSecond ?? NaN),
          )
        : null,
      problems: byConnections.flatMap(problemsOf),
    });
  }
  return all;
}

/**
 * Time per request at saturation (1000 / req/s, whatever the bottleneck), split into a part per
 * request and one per recipient.
 */
function perRecipientCost(one: Figures | undefined, hundred: Figures | undefined) {
  if (!one || !hundred) return null;
  const perRequestOne = 1000 / one.requestsPerSecond;
  const perRequestHundred = 1000 / hundred.requestsPerSecond;
  const perRecipient = (perRequestHundred - perRequestOne) / 99;
  return { msPerRequest: perRequestOne - perRecipient, msPerRecipient: perRecipient };
}

function cpuLine(
  label: string,
  cpu: Record<string, number> | null,
  drain: Record<string, number> | null,
  divisor: number,
): string {
  if (!cpu) return `    ${label}: (no /proc)`;
  const ours = (entries: Record<string, number>) =>
    Object.entries(entries).filter(([name]) => name !== OTHER_PROCESSES);
  const sumOf = (entries: Record<string, number>) =>
    ours(entries).reduce((sum, [, value]) => sum + value, 0);
  const total = sumOf(cpu);
  const parts = ours(cpu)
    .filter(([, value]) => value / total >= 0.02)
    .map(([name, value]) => `${name} ${(value / divisor).toFixed(2)}`);
  const relay = drain
    ? `; of which relay catching up after the run ${(sumOf(drain) / divisor).toFixed(2)}`
    : '';
  const other = cpu[OTHER_PROCESSES];
  const foreign =
    other === undefined ? '' : ` [meanwhile other processes: ${(other / divisor).toFixed(2)}]`;
  return `    ${label}: ${(total / divisor).toFixed(2)} ms = ${parts.join(', ')}${relay}${foreign}`;
}

interface HalfLoadFigures extends OpenLoopLatency {
  /** The peak it is half of: the best accepted msg/s of the 1-recipient case above. */
  peakPerSecond: number;
  scheduled: number;
  answered: number;
  cpuMsPerRequest: Record<string, number> | null;
  coresBusy: Record<string, number> | null;
}

/** Open-loop 1-recipient sends at half of the case's peak rate (the p99 target's load). */
async function measureHalfLoad(
  sendCase: SendCase,
  peakPerSecond: number,
  cpu: ProcessCpu,
  database: SendDatabase,
  signal: AbortSignal,
): Promise<HalfLoadFigures> {
  const ratePerSecond = peakPerSecond / 2;
  const warmupCount = Math.round(ratePerSecond * SETTINGS.halfLoadWarmupSeconds);
  const before = cpu.snapshot();
  const sample = await runOpenLoop({
    target: sendCase.target,
    ratePerSecond,
    count: Math.max(20, Math.round(ratePerSecond * SETTINGS.halfLoadSeconds)),
    warmupCount,
    next: () => nextRequest(sendCase),
    check: (response) =>
      sendCase.checkResponse?.(response.status, response.body) ??
      (response.status === sendCase.expect.status ? null : `status ${response.status}`),
    maxInFlight: SETTINGS.halfLoadMaxInFlight,
    signal,
  });
  const spent = cpuBetween(before, cpu.snapshot());
  await database.waitForRelay(SETTINGS.relayWaitMs, signal);
  // The CPU spent covers the warm-up requests too.
  const busy = perRequest(
    [spent],
    sample.durationSeconds * 1000 + warmupCount * (1000 / ratePerSecond),
  );
  return {
    ...openLoopLatency(sample, sample.latenciesMs),
    peakPerSecond,
    scheduled: sample.scheduled,
    answered: sample.answered,
    cpuMsPerRequest: perRequest([spent], sample.answered + warmupCount),
    coresBusy: busy,
  };
}

function halfLoadProblems(figures: HalfLoadFigures): string[] {
  const problems: string[] = [];
  if (figures.failed > 0) {
    problems.push(
      `half load: ${figures.failed} answers not accepted, first: ${figures.firstFailure ?? '?'}`,
    );
  }
  if (figures.skipped > 0) {
    problems.push(
      `half load: ${figures.skipped} requests not sent (${SETTINGS.halfLoadMaxInFlight} in flight)`,
    );
  }
  return problems;
}

/** Where an accept case's time goes at saturation, beside its bare block's. */
function acceptCostLines(
  envoi: CaseResult | undefined,
  bare: CaseResult | undefined,
  index: number,
  targetPerSecond: number | null,
): string[] {
  const own = envoi?.byConnections[index];
  const reference = bare?.byConnections[index];
  if (!envoi || !own) return ['(not measured)'];
  const unit = envoi.recipients > 1 ? 'message' : 'request';
  const divisor = envoi.recipients;
  const lines = [
    `at ${own.connections} connections one ${unit} takes ${(1000 / own.acceptedPerSecond).toFixed(3)} ms of wall time (bare: ${reference ? (1000 / reference.acceptedPerSecond).toFixed(3) : '?'} ms)`,
    cpuLine(`Envoi CPU per ${unit}`, own.cpuMsPerRequest, own.drainCpuMsPerRequest, divisor).trim(),
  ];
  if (reference) {
    lines.push(cpuLine(`bare CPU per ${unit}`, reference.cpuMsPerRequest, null, divisor).trim());
  }
  if (own.coresBusy) lines.push(coresBusyLine(own.coresBusy));
  const cpuPerUnit = Object.entries(own.cpuMsPerRequest ?? {})
    .filter(([label]) => label !== OTHER_PROCESSES)
    .reduce((sum, [, value]) => sum + value / divisor, 0);
  if (targetPerSecond !== null && cpuPerUnit > 0) {
    lines.push(
      `at ${integer(targetPerSecond)} ${unit}s/s this CPU per ${unit} would keep ${((cpuPerUnit * targetPerSecond) / 1000).toFixed(1)} cores busy (the machine has ${os.cpus().length}): the cost per ${unit} must fall below ${((1000 * os.cpus().length) / targetPerSecond).toFixed(3)} ms`,
    );
  }
  return lines;
}

function halfLoadCostLines(figures: HalfLoadFigures | null): string[] {
  if (!figures) return ['(not measured)'];
  const lines = [
    `${integer(figures.answered)} sends at ${integer(figures.ratePerSecond)} req/s: p50 ${ms(figures.latencyP50Ms)} ms, p99 ${ms(figures.latencyP99Ms)} ms, max ${ms(figures.latencyMaxMs)} ms; p99 − p50 = ${ms(figures.latencyP99Ms - figures.latencyP50Ms)} ms of queueing and stalls`,
    cpuLine('CPU per request', figures.cpuMsPerRequest, null, 1).trim(),
  ];
  if (figures.coresBusy) lines.push(coresBusyLine(figures.coresBusy));
  return lines;
}

function sendTargets(
  all: Map<SendCaseId, CaseResult>,
  halfLoad: HalfLoadFigures | null,
): TargetResult[] {
  const top = SETTINGS.connectionLevels.length - 1;
  const envoi100 = all.get('envoi100');
  const levelName = `${SETTINGS.connectionLevels[top]} connections`;
  const ratioTarget = (id: 'envoi1' | 'envoi100', bare: SendCaseId, threshold: number) => {
    const result = all.get(id);
    return atLeast({
      target: `send, ${result?.name ?? id}, ${levelName}: × the bare block`,
      value: result?.ratioToBare?.[top] ?? NaN,
      threshold,
      format: (value) => `${value.toFixed(3)} × bare`,
      breakdown: acceptCostLines(result, all.get(bare), top, null),
    });
  };
  return [
    atLeast({
      target: `send, 100 recipients, ${levelName}: accepted msg/s`,
      value: envoi100?.byConnections[top]?.acceptedPerSecond ?? NaN,
      threshold: TARGETS.acceptedPerSecond100,
      format: (value) => `${integer(value)} msg/s`,
      breakdown: acceptCostLines(envoi100, all.get('bare100'), top, TARGETS.acceptedPerSecond100),
    }),
    ratioTarget('envoi100', 'bare100', TARGETS.ratioToBare100),
    ratioTarget('envoi1', 'bare1', TARGETS.ratioToBare1),
    below({
      target: `send, 1 recipient, open loop at half of the peak (${integer(halfLoad?.ratePerSecond ?? NaN)} of ${integer(halfLoad?.peakPerSecond ?? NaN)} req/s): p99`,
      value: halfLoad?.latencyP99Ms ?? NaN,
      threshold: TARGETS.halfLoadP99Ms1,
      format: (value) => `${ms(value)} ms`,
      breakdown: halfLoadCostLines(halfLoad),
    }),
    below({
      target: `send, 100 recipients, ${levelName}: how far the outbox relay is behind when a run ends`,
      value: Math.max(...(envoi100?.byConnections[top]?.relay ?? []).map((relay) => relay.lagMs)),
      threshold: TARGETS.relayLagMs,
      format: (value) => `${integer(value)} ms`,
      breakdown: [
        `rows left unpublished: ≤ ${integer(Math.max(...(envoi100?.byConnections[top]?.relay ?? []).map((relay) => relay.backlog)))}`,
      ],
    }),
  ];
}

function coresBusyLine(coresBusy: Record<string, number>): string {
  const ours = Object.entries(coresBusy).filter(([label]) => label !== OTHER_PROCESSES);
  const total = ours.reduce((sum, [, cores]) => sum + cores, 0);
  const busy = ours.filter(([, cores]) => cores >= 0.05);
  return `cores busy during the runs: ${total.toFixed(2)} of ${os.cpus().length} (${busy.map(([label, cores]) => `${label} ${cores.toFixed(2)}`).join(', ')})`;
}

function printReport(
  all: Map<SendCaseId, CaseResult>,
  envoi: EnvoiStorage,
  bare: StoredCheck,
  finalRelay: { backlog: number; lagMs: number; drainMs: number | null; left: number },
): void {
  const top = SETTINGS.connectionLevels.length - 1;
  const topConnections = SETTINGS.connectionLevels[top] ?? 0;
  console.log(
    `\nreq/s, msg/s (accepted messages): median of ${SETTINGS.rounds} runs; latencies (ms) over all n responses; ×bare: msg/s ÷ the bare block's`,
  );
  console.log(TABLE_HEADER);
  for (const result of all.values()) for (const line of figureLines(result)) console.log(line);

  console.log('\nSummary');
  console.log(
    `  accepted messages/s at ${topConnections} connections (× the bare block in this run):`,
  );
  for (const result of all.values()) {
    const measured = result.byConnections[top];
    if (result.system !== 'envoi' || !measured) continue;
    console.log(
      `    ${integer(measured.acceptedPerSecond).padStart(6)} msg/s  ×${(result.ratioToBare?.[top] ?? NaN).toFixed(3)}  p50 ${ms(measured.latencyP50Ms)} ms, p99 ${ms(measured.latencyP99Ms)} ms  ${result.name}`,
    );
  }
  const at = (id: SendCaseId) => all.get(id)?.byConnections[top];
  for (const [system, oneId, hundredId] of [
    ['envoi', 'envoi1', 'envoi100'],
    ['bare', 'bare1', 'bare100'],
  ] as const) {
    const cost = perRecipientCost(at(oneId), at(hundredId));
    if (!cost) continue;
    console.log(
      `  ${system}: 1000/(req/s) ≈ ${cost.msPerRequest.toFixed(2)} ms per request + ${cost.msPerRecipient.toFixed(3)} ms per recipient`,
    );
  }
  console.log(
    `  CPU ms by process at ${topConnections} connections (run and relay drain together):`,
  );
  for (const result of all.values()) {
    const measured = result.byConnections[top];
    if (!measured) continue;
    const name = `${result.system}: ${result.name}`;
    const drain = result.system === 'envoi' ? measured.drainCpuMsPerRequest : null;
    console.log(cpuLine(`${name}, per request`, measured.cpuMsPerRequest, drain, 1));
    if (result.recipients > 1) {
      console.log(
        cpuLine(`${name}, per message`, measured.cpuMsPerRequest, drain, result.recipients),
      );
    }
    if (measured.coresBusy) console.log(`      ${coresBusyLine(measured.coresBusy)}`);
  }
  console.log(
    `  database: ${integer(envoi.rows)} rows in messages.messages for ${integer(envoi.answered)} messages answered 202/queued: ${envoi.lost} lost, ${envoi.unanswered} without an answer; ${integer(envoi.contents)} contents, ${integer(envoi.outboxRows)} outbox rows carrying ${integer(envoi.outboxMessages)} stream messages (${integer(envoi.sendReceptionEvents)} of them sends' receptions, ${integer(envoi.receptionBatches)} reception batches of ${integer(envoi.batchedReceptions)} events)`,
  );
  console.log(
    `  outbox: ${integer(finalRelay.backlog)} rows unpublished when the last run ended (the oldest ${integer(finalRelay.lagMs)} ms behind), ${finalRelay.drainMs === null ? `${integer(finalRelay.left)} still unpublished after ${SETTINGS.finalRelayWaitMs / 1000} s` : `${integer(finalRelay.left)} left after ${integer(finalRelay.drainMs)} ms`}`,
  );
  const bytes = Object.entries(envoi.bytesPerMessage)
    .filter(([, size]) => size >= 10)
    .map(([table, size]) => `${table} ${integer(size)}`)
    .join(', ');
  console.log(`  bytes per stored message (tables with indexes and TOAST): ${bytes}`);
  console.log(
    `  bare block: ${integer(bare.rows)} rows for ${integer(bare.answered)} answered: ${bare.lost} lost, ${bare.unanswered} without an answer`,
  );
}

function storageProblems(envoi: EnvoiStorage, bare: StoredCheck): string[] {
  const problems: string[] = [];
  if (envoi.lost > 0) problems.push(`${envoi.lost} accepted messages are not in messages.messages`);
  if (envoi.unanswered !== 0) {
    problems.push(`${envoi.unanswered} stored messages were never answered (a request timed out?)`);
  }
  if (envoi.contents !== envoi.rows) {
    problems.push(`${envoi.rows} messages but ${envoi.contents} contents`);
  }
  if (envoi.batchedReceptions !== envoi.rows) {
    problems.push(
      `${envoi.batchedReceptions} reception events in the outbox for ${envoi.rows} messages (expected one each)`,
    );
  }
  if (
    envoi.outboxMessages !==
    envoi.receptionBatches + envoi.sendReceptionEvents + envoi.deliveryJobs
  ) {
    problems.push(
      `${envoi.outboxMessages} outbox messages for ${envoi.receptionBatches} reception batches, ${envoi.sendReceptionEvents} sends and ${envoi.deliveryJobs} delivery jobs (expected reception batches, no send's receptions since sends are counted from those batches, and a job each)`,
    );
  }
  if (envoi.sendReceptionEvents > envoi.deliveryJobs) {
    problems.push(
      `${envoi.sendReceptionEvents} send receptions events for ${envoi.deliveryJobs} delivery jobs (expected at most one per send, and a send has at least one job)`,
    );
  }
  if (bare.lost > 0 || bare.unanswered !== 0) {
    problems.push(`bare block: ${bare.lost} answered rows missing, ${bare.unanswered} unanswered`);
  }
  return problems;
}

const DELIVERY_STOP_TIMEOUT_MS = 3_000;

/** Jobs in the DELIVERY work queue (nobody takes them while the delivery service is stopped). */
async function deliveryQueueDepth(natsUrl: string): Promise<number | null> {
  const connection = await connectNats({ servers: natsUrl.split(','), name: 'envoi-bench-send' });
  try {
    const jsm = await connection.jetstreamManager();
    return (await jsm.streams.info(DELIVERY_STREAM)).state.messages;
  } catch {
    return null;
  } finally {
    await connection.drain();
  }
}

runBenchmark('send-throughput', async (run) => {
  const { root, dataDir, stoppers, signal, log } = run;
  const { platform, dns } = await startPlatformWithDns(run, {
    OUTBOX_RELAY_INTERVAL_MS: String(SETTINGS.relayIntervalMs),
  });
  // This benchmark measures accepting. A running delivery service would attempt every
  // message at once (the recipients' domains do not resolve here, so each would bounce and be
  // suppressed) and share the machine with the accept path; its loop has a baseline of its own.
  const delivery = platform.services.find((service) => service.name === 'delivery');
  if (delivery) {
    log('stopping the delivery service: delivery jobs stay in the DELIVERY work queue');
    // It has nothing in flight; it is killed if it has not exited after this.
    const stopping = Date.now();
    await delivery.stop(DELIVERY_STOP_TIMEOUT_MS);
    const how = delivery.child.signalCode === 'SIGKILL' ? 'killed' : 'exited';
    log(`delivery service ${how} after ${((Date.now() - stopping) / 1000).toFixed(1)} s`);
  }

  log('starting the bare accept block (Fastify HTTPS → NATS → INSERT responder)');
  const bare = await startBareAccept(root, platform, dataDir, stoppers);
  const database = await SendDatabase.connect(platform.databaseUrl);
  stoppers.add('database client', () => database.close());
  signal.throwIfAborted();

  const runId = randomUUID().slice(0, 8);
  const ca = readFileSync(platform.certificate.certPath, 'utf8');
  const envoiGateway = platformGateway(platform, dataDir);
  const account = await createBenchAccount(platform);
  const domain = await createVerifiedDomain(
    { baseUrl: envoiGateway.baseUrl, ca },
    account,
    dns,
    `b${runId}.example.test`,
    signal,
  );
  log(`account ${account.accountId}, sending domain ${domain.domain} verified`);

  const answered: AnsweredIds = { envoi: new Set(), bare: new Set() };
  const cases = defineSendCases(
    { envoi: envoiGateway, bare: bare.server },
    account,
    domain.domain,
    ca,
    runId,
    answered,
  );
  const cpu = new ProcessCpu('bench (autocannon)');
  for (const service of platform.services) cpu.label(service.child.pid, service.name);
  cpu.label(bare.server.pid, 'bare-http');
  cpu.label(bare.responder.pid, 'bare-responder');
  const memory = new StackMemory(
    cpu,
    new Set(['bench (autocannon)', 'bare-http', 'bare-responder']),
  );
  memory.recordIdle();
  memory.start();
  log(
    `${cases.length} cases (${contentBytes()} B of text + HTML per message): ~${SETTINGS.warmupSeconds} s warm-up each, then ${SETTINGS.rounds} interleaved rounds of ~${SETTINGS.secondsPerRun} s (≥ ${SETTINGS.minRequestsPerConnection} requests per connection) at ${SETTINGS.connectionLevels.join(' and ')} connections`,
  );
  const measured = await measureAll(cases, database, cpu, signal, log);
  const all = results(cases, measured);
  const oneRecipient = cases.find((sendCase) => sendCase.id === 'envoi1');
  const peak = Math.max(
    ...(all.get('envoi1')?.byConnections.map((figures) => figures.acceptedPerSecond) ?? []),
  );
  let halfLoad: HalfLoadFigures | null = null;
  if (oneRecipient && Number.isFinite(peak) && peak > 0) {
    // Steady state at half load: not the tail of the full-speed runs' events still being consumed.
    const backlog = await waitForEventConsumers(
      platform.natsUrl,
      SETTINGS.consumersCatchUpMs,
      signal,
    );
    log(
      `half load: EVENTS consumers had ${integer(backlog.pendingAtStart)} events to work off after the full-speed runs; ${backlog.pendingAtEnd === 0 ? `caught up in ${integer(backlog.waitedMs)} ms` : `${integer(backlog.pendingAtEnd)} still pending after ${integer(backlog.waitedMs)} ms`}`,
    );
    log(
      `half load: 1-recipient sends at ${integer(peak / 2)} req/s (half of ${integer(peak)}) for ~${SETTINGS.halfLoadSeconds} s, open loop`,
    );
    halfLoad = await measureHalfLoad(oneRecipient, peak, cpu, database, signal);
  }
  const memoryReport = memory.stop();
  const finalRelay = await database.waitForRelay(SETTINGS.finalRelayWaitMs, signal);
  const envoiStored = await database.envoiStorage(account.accountId, answered.envoi);
  const bareStored = await database.bareStorage(answered.bare);
  const deliveryJobs = await deliveryQueueDepth(platform.natsUrl);
  printReport(all, envoiStored, bareStored, finalRelay);
  console.log(
    `  DELIVERY work queue: ${deliveryJobs === null ? 'unavailable' : integer(deliveryJobs)} jobs published for ${integer(envoiStored.rows)} messages in ${integer(envoiStored.deliveryJobs)} jobs`,
  );

  const problems = [
    ...[...all.values()].flatMap((result) =>
      result.problems.map((problem) => `${result.system} ${result.name}: ${problem}`),
    ),
    ...storageProblems(envoiStored, bareStored),
    ...(finalRelay.left > 0
      ? [`${finalRelay.left} outbox rows unpublished ${SETTINGS.finalRelayWaitMs} ms after the run`]
      : []),
    ...(deliveryJobs === envoiStored.deliveryJobs
      ? []
      : [
          `${deliveryJobs ?? '?'} delivery jobs in the stream for ${envoiStored.deliveryJobs} jobs of ${envoiStored.rows} messages`,
        ]),
    ...(halfLoad ? halfLoadProblems(halfLoad) : ['half load: not measured (no 1-recipient peak)']),
  ];
  console.log('\nMemory of the stack (every service, nats-server, PostgreSQL)');
  for (const line of memoryLines(memoryReport)) console.log(line);
  const targets = sendTargets(all, halfLoad);
  for (const line of targetLines(targets)) console.log(line);
  return {
    report: {
      settings: { ...SETTINGS, contentBytes: contentBytes() },
      cases: [...all.values()],
      storage: { envoi: envoiStored, bare: bareStored, finalRelay, deliveryJobs },
      halfLoad,
      memory: memoryReport,
      targets,
      problems,
    },
    problems,
  };
});
