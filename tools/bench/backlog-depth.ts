import 'reflect-metadata';

import { randomUUID } from 'node:crypto';

import { DELIVERY_STREAM } from '@envoi/contracts-core';
import { connectNats } from '@envoi/shared-nats';

import { runBenchmark } from './bench-run';
import {
  arrivalRate,
  DeliveryControl,
  type DeliveryStack,
  perUnit,
  SENDER_LOCAL_PART,
  sendThroughApi,
  startDeliveryStack,
} from './delivery-pipeline';
import { type ReceiptCollector, waitForArrivals } from './delivery-sink';
import { cpuBetween, type CpuSnapshot, OTHER_PROCESSES, ProcessCpu } from './process-cpu';
import { memoryLines, StackMemory } from './process-memory';
import { atLeast, targetLines, type TargetResult } from './targets';

/**
 * `npm run bench:backlog` (issue 13): whether delivering gets dearer as the queue grows. Twice, a
 * backlog is built with the delivery service stopped (N recipients accepted through the API, every
 * job published to the DELIVERY work queue), then a fresh delivery process drains it into the SMTP
 * sink and the delivery rate and CPU per message are measured over its first deliveries: once
 * with a small backlog, once with a large one. The rest of the large backlog is then purged.
 */

/** A positive whole number from the environment, or the default. */
function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new Error(`${name} must be a positive whole number (got ${raw})`);
  }
  return value;
}

/** What issue 13 asks for: 10⁶ queued against 10³, measured over the first 20 000. */
const ISSUE = { large: 1_000_000, small: 1_000, measured: 20_000 } as const;

const SETTINGS = {
  /**
   * Recipients queued in each case. Building 10⁶ through the API takes far longer than a
   * benchmark run should on a 2-core machine (~2 000 accepted/s), hence the smaller default.
   */
  small: setting('BENCH_BACKLOG_SMALL', ISSUE.small),
  large: setting('BENCH_BACKLOG_LARGE', 100_000),
  /** Deliveries measured in the large case (the small one measures all of its own). */
  measured: setting('BENCH_BACKLOG_MEASURED', 10_000),
  recipientsPerRequest: 100,
  requestsInFlight: 4,
  /** Bounds: building one backlog, publishing its jobs, measuring its deliveries. */
  buildLimitMs: setting('BENCH_BACKLOG_BUILD_LIMIT_MS', 600_000),
  publishLimitMs: 600_000,
  measureLimitMs: setting('BENCH_BACKLOG_MEASURE_LIMIT_MS', 300_000),
  stallMs: 30_000,
  /** The large case's cost per message may exceed the small one's by this factor (noise). */
  tolerance: 1.2,
} as const;

const BENCH_LABEL = 'bench (sink, DNS, API client)';

const integer = (value: number) =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US').replace(/,/g, ' ') : '–';

/** Rate and CPU per message over a case's first `count` deliveries. */
interface Window {
  deliveries: number;
  deliveredPerSecond: number;
  cpuMsPerMessage: Record<string, number> | null;
}

interface BacklogFigures {
  queued: number;
  buildSeconds: number;
  acceptedPerSecond: number;
  /** From the last accepted message until every job was in the DELIVERY work queue. */
  publishSeconds: number;
  /** Delivery process ready → first message in the sink. */
  firstDeliveryMs: number;
  /** Over as many deliveries as the small case has (like for like), then over all measured. */
  likeForLike: Window;
  measured: Window;
  jobsPurged: number | null;
}

function window(
  collector: ReceiptCollector,
  count: number,
  cpuStart: CpuSnapshot | null,
  cpuEnd: CpuSnapshot | null,
): Window {
  return {
    deliveries: count,
    deliveredPerSecond: arrivalRate(collector.arrivals.slice(0, count)).perSecond,
    cpuMsPerMessage: perUnit(cpuBetween(cpuStart, cpuEnd), count),
  };
}

/** Throws when `signal` aborts or `limitMs` passes, whichever comes first. */
async function withinLimit<T>(
  limitMs: number,
  signal: AbortSignal,
  what: string,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`${what} took longer than ${limitMs} ms`)),
    limitMs,
  );
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await body(controller.signal);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/** Empties the DELIVERY work queue; returns how many jobs it held (null: unavailable). */
async function purgeDeliveryQueue(natsUrl: string): Promise<number | null> {
  const connection = await connectNats({
    servers: natsUrl.split(','),
    name: 'envoi-bench-backlog',
  });
  try {
    const jsm = await connection.jetstreamManager();
    return (await jsm.streams.purge(DELIVERY_STREAM)).purged;
  } catch {
    return null;
  } finally {
    await connection.drain();
  }
}

interface CaseContext {
  stack: DeliveryStack;
  delivery: DeliveryControl;
  cpu: ProcessCpu;
  runId: string;
  signal: AbortSignal;
  log: (line: string) => void;
}

/**
 * One case, the delivery service stopped on entry and on exit: `queued` messages accepted and
 * their jobs published, then a delivery process started and timed over its first `measured`
 * deliveries (and over the first `likeForLike`).
 */
async function runCase(
  context: CaseContext,
  name: string,
  queued: number,
  likeForLike: number,
  measured: number,
): Promise<BacklogFigures> {
  const { stack, cpu, log } = context;
  const prefix = `${name}-${context.runId}-`;
  const collector = stack.router.collect(prefix, false);
  const recipients = Array.from(
    { length: queued },
    (_, index) => `${prefix}${index}@${stack.recipientDomain}`,
  );
  log(`${name}: queueing ${integer(queued)} messages with the delivery service stopped`);
  const sent = await withinLimit(
    SETTINGS.buildLimitMs,
    context.signal,
    `${name}: queueing`,
    (signal) =>
      sendThroughApi(
        stack.gateway,
        stack.account,
        `${SENDER_LOCAL_PART}@${stack.sendingDomain}`,
        recipients,
        SETTINGS,
        signal,
      ),
  );
  const buildSeconds = (sent.lastAcceptedAt - sent.startedAt) / 1000;
  log(`${name}: accepted in ${buildSeconds.toFixed(1)} s; waiting for every job to be queued`);
  if (!(await stack.database.waitForJobsPublished(SETTINGS.publishLimitMs, context.signal))) {
    throw new Error(`${name}: jobs still unpublished after ${SETTINGS.publishLimitMs} ms`);
  }
  const publishSeconds = (Date.now() - sent.lastAcceptedAt) / 1000;
  log(`${name}: every job is queued; starting a delivery process`);
  await context.delivery.start();
  const readyAt = Date.now();
  const cpuStart = cpu.snapshot();
  const wait = (count: number) =>
    waitForArrivals(collector, count, {
      timeoutMs: SETTINGS.measureLimitMs,
      stallMs: SETTINGS.stallMs,
      signal: context.signal,
      what: `${name}: delivering`,
    });
  await wait(likeForLike);
  const cpuLikeForLike = cpu.snapshot();
  await wait(measured);
  const cpuMeasured = cpu.snapshot();
  log(`${name}: ${integer(measured)} delivered; ${await context.delivery.stop()}`);
  const jobsPurged = await purgeDeliveryQueue(stack.platform.natsUrl);
  return {
    queued,
    buildSeconds,
    acceptedPerSecond: queued / buildSeconds,
    publishSeconds,
    firstDeliveryMs: (collector.arrivals[0]?.receivedAt ?? NaN) - readyAt,
    likeForLike: window(collector, likeForLike, cpuStart, cpuLikeForLike),
    measured: window(collector, measured, cpuStart, cpuMeasured),
    jobsPurged,
  };
}

function ownCpu(entries: Record<string, number> | null): number {
  return Object.entries(entries ?? {})
    .filter(([label]) => label !== OTHER_PROCESSES)
    .reduce((sum, [, value]) => sum + value, 0);
}

function cpuText(entries: Record<string, number> | null): string {
  if (entries === null) return '(no /proc)';
  return `${ownCpu(entries).toFixed(2)} ms = ${Object.entries(entries)
    .map(([label, value]) => `${label} ${value.toFixed(2)}`)
    .join(', ')}`;
}

function printCase(name: string, figures: BacklogFigures): void {
  console.log(
    `\n${name}: ${integer(figures.queued)} queued (accepted at ${integer(figures.acceptedPerSecond)} msg/s in ${figures.buildSeconds.toFixed(1)} s, jobs all queued ${figures.publishSeconds.toFixed(1)} s later); first delivery ${integer(figures.firstDeliveryMs)} ms after the delivery process was ready`,
  );
  const windows =
    figures.likeForLike.deliveries === figures.measured.deliveries
      ? [figures.measured]
      : [figures.likeForLike, figures.measured];
  for (const measured of windows) {
    console.log(
      `  first ${integer(measured.deliveries)}: ${integer(measured.deliveredPerSecond)} msg/s; CPU per message ${cpuText(measured.cpuMsPerMessage)}`,
    );
  }
  console.log(`  jobs purged afterwards: ${figures.jobsPurged ?? 'unknown'}`);
}

function backlogTargets(small: BacklogFigures, large: BacklogFigures): TargetResult[] {
  const breakdown = [
    `small, first ${integer(small.likeForLike.deliveries)}: ${integer(small.likeForLike.deliveredPerSecond)} msg/s, CPU per message ${cpuText(small.likeForLike.cpuMsPerMessage)}`,
    `large, first ${integer(large.likeForLike.deliveries)}: ${integer(large.likeForLike.deliveredPerSecond)} msg/s, CPU per message ${cpuText(large.likeForLike.cpuMsPerMessage)}`,
    `large, first ${integer(large.measured.deliveries)}: ${integer(large.measured.deliveredPerSecond)} msg/s, CPU per message ${cpuText(large.measured.cpuMsPerMessage)}`,
    `first delivery after the process was ready: small ${integer(small.firstDeliveryMs)} ms, large ${integer(large.firstDeliveryMs)} ms`,
  ];
  const ratio = (value: number) => `${value.toFixed(2)} ×`;
  const depths = `${integer(large.queued)} queued vs ${integer(small.queued)}`;
  return [
    atLeast({
      target: `delivery rate, ${depths}, over the first ${integer(large.measured.deliveries)} (÷ the small backlog's)`,
      value: large.measured.deliveredPerSecond / small.likeForLike.deliveredPerSecond,
      threshold: 1 / SETTINGS.tolerance,
      format: ratio,
      breakdown,
    }),
    atLeast({
      target: `CPU per message, ${depths}, over the first ${integer(large.measured.deliveries)} (the small backlog's ÷ it)`,
      value: ownCpu(small.likeForLike.cpuMsPerMessage) / ownCpu(large.measured.cpuMsPerMessage),
      threshold: 1 / SETTINGS.tolerance,
      format: ratio,
      breakdown,
    }),
  ];
}

runBenchmark('backlog-depth', async ({ root, dataDir, stoppers, signal, log }) => {
  const measured = Math.min(SETTINGS.measured, SETTINGS.large);
  const asked =
    SETTINGS.large === ISSUE.large && measured === ISSUE.measured && SETTINGS.small === ISSUE.small
      ? 'as issue 13 asks'
      : `issue 13 asks for ${integer(ISSUE.large)} vs ${integer(ISSUE.small)} over the first ${integer(ISSUE.measured)} (BENCH_BACKLOG_LARGE, BENCH_BACKLOG_SMALL, BENCH_BACKLOG_MEASURED)`;
  log(
    `backlogs of ${integer(SETTINGS.small)} and ${integer(SETTINGS.large)} recipients, measured over the first ${integer(SETTINGS.small)} and ${integer(measured)} deliveries; ${asked}`,
  );
  const runId = randomUUID().slice(0, 8);
  const stack = await startDeliveryStack({ root, dataDir, stoppers, signal, log }, runId, {});
  const cpu = new ProcessCpu(BENCH_LABEL);
  for (const service of stack.platform.services) cpu.label(service.child.pid, service.name);
  const memory = new StackMemory(cpu, new Set([BENCH_LABEL]));
  memory.recordIdle();
  memory.start();
  const delivery = new DeliveryControl(
    stack.platform,
    stack.platform.serviceEnv,
    root,
    dataDir,
    stoppers,
    cpu,
    null,
  );
  log(`stopping the delivery service: ${await delivery.stop()}`);
  const context: CaseContext = { stack, delivery, cpu, runId, signal, log };
  const small = await runCase(context, 'small', SETTINGS.small, SETTINGS.small, SETTINGS.small);
  const large = await runCase(
    context,
    'large',
    SETTINGS.large,
    Math.min(SETTINGS.small, measured),
    measured,
  );
  const memoryReport = memory.stop();

  console.log(
    `\nBacklog depth (${asked}): delivery rate from the first arrival to the N-th; CPU from the delivery process's readiness to the N-th arrival`,
  );
  printCase('small backlog', small);
  printCase('large backlog', large);
  console.log('\nMemory of the stack (every service, nats-server, PostgreSQL)');
  for (const line of memoryLines(memoryReport)) console.log(line);
  const targets = backlogTargets(small, large);
  for (const line of targetLines(targets)) console.log(line);
  const problems = [
    ...(stack.router.unclaimed > 0
      ? [
          `${stack.router.unclaimed} unexpected messages at the sink (first: ${stack.router.firstUnclaimed})`,
        ]
      : []),
  ];
  return {
    report: {
      settings: { ...SETTINGS, measured },
      issueAsks: ISSUE,
      small,
      large,
      memory: memoryReport,
      targets,
      problems,
    },
    problems,
  };
});
