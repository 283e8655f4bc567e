import 'reflect-metadata';

import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

import { BareProcess } from './bare-process';
import {
  BARE_RESULT,
  BARE_RUN,
  type BareRunRequest,
  type BareRunResult,
} from './bare-sender.constants';
import type { DnsTestServer } from './bench-domain';
import { fixed, integer } from './bench-format';
import type { BenchAccount } from './bench-platform';
import { runBenchmark } from './bench-run';
import type { DeliveryDatabase, DeliveryState, MessageTimeline } from './delivery-database';
import {
  type Accepted,
  acceptedEntries,
  arrivalRate,
  DeliveryControl,
  perUnit,
  SENDER_LOCAL_PART,
  type SendPhase,
  sendRequest,
  sendThroughApi,
  startDeliveryStack,
} from './delivery-pipeline';
import { type WorkQueueFigures, workQueueLines, WorkQueueSampler } from './delivery-queue';
import {
  type Arrival,
  type ReceiptCollector,
  type ReceiptRouter,
  waitForArrivals,
} from './delivery-sink';
import { percentile, sendTrusted } from './load';
import { type OpenLoopLatency, openLoopLatency, runOpenLoop } from './open-loop';
import { cpuBetween, OTHER_PROCESSES, ProcessCpu } from './process-cpu';
import { memoryLines, StackMemory } from './process-memory';
import { atLeast, below, targetLines, type TargetResult } from './targets';

/**
 * `npm run bench:delivery` (issue 6): delivered messages per second from Envoi's API into a local
 * SMTP sink (gateway → messages → outbox → JetStream → delivery workers → MX found through DNS →
 * SMTP with STARTTLS and DKIM → the sink), next to a bare nodemailer pooled sender (5
 * connections, with and without DKIM) sending the same messages to the same sink in the same
 * run. The bare block runs before and after Envoi's run, so that a change in the machine's load
 * shows. Every message must arrive exactly once; Envoi's must reach `Delivered` with one attempt.
 */

const SETTINGS = {
  /** Messages of each measured run (Envoi's and each bare case's). */
  messages: 2_000,
  /** Recipients per API request (each recipient is one message). */
  recipientsPerRequest: 100,
  /** API requests in flight while sending. */
  requestsInFlight: 2,
  /** Sent and delivered before the measured run (JIT, pools, caches, DKIM key). */
  /**
   * Warm-ups long enough for each block to reach its steady rate: with 200 the bare sender still
   * ran 1.4 × faster in its second round than in its first (JIT compilation).
   */
  envoiWarmupMessages: 1_000,
  bareWarmupMessages: 2_000,
  /** The bare sender's pool, as the delivery service's SMTP_MAX_CONNECTIONS_PER_HOST default. */
  bareConnections: 5,
  /** Messages whose status is read through the API, spread over the run. */
  apiSample: 20,
  /** A run gives up after this long, or when no message arrived for `stallMs`. */
  runTimeoutMs: 120_000,
  stallMs: 30_000,
  /** How long the statuses may take to become Delivered once every message arrived. */
  settleTimeoutMs: 30_000,
  /** Retries within the run (not after a minute): a deferral shows up as a second attempt. */
  retryScheduleMs: '1000,2000',
  /** The latency target's run: sends at half the live rate for about this long (open loop). */
  halfRateSeconds: 8,
  halfRateMaxInFlight: 100,
} as const;

/** What this benchmark's own process is labelled (it runs the sink, DNS server and API client). */
const BENCH_LABEL = 'bench (sink, DNS, API client)';

/** Issue 13's targets for delivering. */
const TARGETS = {
  ratioToBareWithDkim: 0.5,
  halfRateP99Ms: 2_000,
} as const;

/** The bare block's variants. */
const BARE_CASES = [
  { key: 'dkim', name: 'bare nodemailer pool 5, STARTTLS + DKIM', starttls: true, dkim: true },
  { key: 'nodkim', name: 'bare nodemailer pool 5, STARTTLS', starttls: true, dkim: false },
  { key: 'plain', name: 'bare nodemailer pool 5, plain text', starttls: false, dkim: false },
] as const;
type BareCaseKey = (typeof BARE_CASES)[number]['key'];

// ---------------------------------------------------------------------------------------------
// The bare sender process

type BareSender = BareProcess<BareRunRequest, BareRunResult>;

interface BareRound {
  round: number;
  /** Sink side: first to last measured arrival. */
  deliveredPerSecond: number;
  /** Sender side: first message handed to the pool to the last one accepted. */
  sentPerSecond: number;
  senderCpuMsPerMessage: number;
  received: number;
  duplicates: number;
  errors: number;
  firstError: string | null;
}

interface BareFigures {
  key: BareCaseKey;
  name: string;
  starttls: boolean;
  dkim: boolean;
  /** Mean of the rounds. */
  deliveredPerSecond: number;
  senderCpuMsPerMessage: number;
  rounds: BareRound[];
}

// ---------------------------------------------------------------------------------------------
// The run

interface Context {
  runId: string;
  signal: AbortSignal;
  log: (line: string) => void;
  sinkPort: number;
  router: ReceiptRouter;
  recipientDomain: string;
}

async function runBare(
  context: Context,
  sender: BareSender,
  bareCase: (typeof BARE_CASES)[number],
  round: number,
  template: string,
  dkimDomain: string,
): Promise<BareRound> {
  const prefix = `bare${round}${bareCase.key}-${context.runId}-`;
  const warm = context.router.collect(`${prefix}w`, false);
  const measured = context.router.collect(`${prefix}m`, false);
  const result = await sender.run(
    {
      port: context.sinkPort,
      maxConnections: SETTINGS.bareConnections,
      starttls: bareCase.starttls,
      dkim: bareCase.dkim,
      dkimDomain,
      warmup: SETTINGS.bareWarmupMessages,
      count: SETTINGS.messages,
      recipientPrefix: prefix,
      recipientDomain: context.recipientDomain,
      envelopeFrom: `bounces@${dkimDomain}`,
      template,
    },
    SETTINGS.runTimeoutMs + 10_000,
    context.signal,
  );
  if (result.errors > 0) {
    throw new Error(`${bareCase.name}: ${result.errors} messages failed: ${result.firstError}`);
  }
  const what = `${bareCase.name}, round ${round}`;
  await waitForArrivals(measured, SETTINGS.messages, {
    timeoutMs: 10_000,
    stallMs: 5_000,
    signal: context.signal,
    what,
  });
  const distinct = measured.byRecipient().size;
  const figures: BareRound = {
    round,
    deliveredPerSecond: arrivalRate(measured.arrivals).perSecond,
    sentPerSecond: SETTINGS.messages / result.seconds,
    senderCpuMsPerMessage: result.cpuMs / SETTINGS.messages,
    received: measured.count,
    duplicates: measured.count - distinct + (warm.count - warm.byRecipient().size),
    errors: result.errors,
    firstError: result.firstError,
  };
  context.log(
    `${what}: ${integer(figures.deliveredPerSecond)} msg/s into the sink (${fixed(figures.senderCpuMsPerMessage, 2)} ms sender CPU per message)`,
  );
  return figures;
}

/** Problems with what the sink received for Envoi's messages (each exactly once, as sent). */
function checkEnvoiArrivals(
  collector: ReceiptCollector,
  sent: SendPhase,
  sendingDomain: string,
): string[] {
  const problems: string[] = [];
  const byRecipient = collector.byRecipient();
  let missing = 0;
  let duplicated = 0;
  let wrongId = 0;
  let unsigned = 0;
  let wrongSender = 0;
  let plain = 0;
  const dkim = new RegExp(
    `^DKIM-Signature:[^]*?\\bd=${sendingDomain.replace(/\./g, '\\.')};`,
    'im',
  );
  for (const [recipient, accepted] of sent.byRecipient) {
    const arrivals = byRecipient.get(recipient) ?? [];
    if (arrivals.length === 0) missing++;
    if (arrivals.length > 1) duplicated++;
    const arrival = arrivals[0];
    if (!arrival?.raw) continue;
    const raw = arrival.raw.toString('utf8');
    const header = /^Message-ID:\s*(<[^>]+>)/im.exec(raw)?.[1];
    if (header !== accepted.id) wrongId++;
    if (!dkim.test(raw)) unsigned++;
    if (!/^bounce\+[0-9a-f-]{36}@/.test(arrival.mailFrom)) wrongSender++;
    if (!arrival.secure) plain++;
  }
  const unknown = [...byRecipient.keys()].filter((recipient) => !sent.byRecipient.has(recipient));
  if (missing > 0) problems.push(`${missing} accepted messages never reached the sink`);
  if (duplicated > 0) problems.push(`${duplicated} messages reached the sink more than once`);
  if (unknown.length > 0) problems.push(`${unknown.length} unexpected recipients at the sink`);
  if (wrongId > 0) problems.push(`${wrongId} messages arrived with another Message-ID`);
  if (unsigned > 0) problems.push(`${unsigned} messages arrived without a DKIM-Signature`);
  if (wrongSender > 0) problems.push(`${wrongSender} messages without a VERP envelope sender`);
  if (plain > 0) problems.push(`${plain} messages arrived without STARTTLS`);
  return problems;
}

/** Reads a spread sample of messages through the API: each must be Delivered after 1 attempt. */
async function checkSampleThroughApi(
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
  ids: readonly string[],
): Promise<{ checked: number; problems: string[] }> {
  const step = Math.max(1, Math.floor(ids.length / SETTINGS.apiSample));
  const sample = ids.filter((_, index) => index % step === 0).slice(0, SETTINGS.apiSample);
  const problems: string[] = [];
  for (const id of sample) {
    const response = await sendTrusted(gateway, {
      method: 'GET',
      path: `/v2/accounts/${account.accountId}/messages/${encodeURIComponent(id)}`,
      headers: { authorization: `Bearer ${account.apiKey}` },
    });
    if (response.status !== 200) {
      problems.push(`GET ${id}: ${response.status} ${response.body.slice(0, 200)}`);
      continue;
    }
    const record = JSON.parse(response.body) as {
      status: string;
      num_attempts: number;
      delivered_at: string | null;
      delivery_attempts: Array<{ status: string }>;
    };
    const attempts = record.delivery_attempts.map((attempt) => attempt.status).join(',');
    if (
      record.status !== 'Delivered' ||
      record.num_attempts !== 1 ||
      attempts !== 'Delivered' ||
      record.delivered_at === null
    ) {
      problems.push(
        `GET ${id}: status ${record.status}, ${record.num_attempts} attempts (${attempts}), delivered_at ${record.delivered_at}`,
      );
    }
  }
  return { checked: sample.length, problems };
}

const STAGES = [
  ['accepted → job published (messages outbox relay)', 'accepted', 'jobPublished'],
  ['job published → attempt claimed (JetStream, worker slot)', 'jobPublished', 'claimed'],
  ['claimed → in the sink (view RPC, DNS, pool, DKIM, SMTP)', 'claimed', 'receipt'],
  ['in the sink → outcome recorded', 'receipt', 'finished'],
  ['recorded → event published (delivery outbox relay)', 'finished', 'eventPublished'],
  ['event published → status applied (messages service)', 'eventPublished', 'statusApplied'],
] as const;

type StagePoint = Exclude<keyof MessageTimeline, 'id'> | 'receipt';

interface StageFigures {
  stage: string;
  messages: number;
  p50Ms: number;
  p90Ms: number;
  maxMs: number;
}

function stageFigures(
  timelines: readonly MessageTimeline[],
  receipts: Map<string, number>,
): StageFigures[] {
  const at = (timeline: MessageTimeline, point: StagePoint) =>
    point === 'receipt' ? (receipts.get(timeline.id) ?? null) : timeline[point];
  return STAGES.map(([stage, from, to]) => {
    const gaps: number[] = [];
    for (const timeline of timelines) {
      const start = at(timeline, from);
      const end = at(timeline, to);
      if (start !== null && end !== null) gaps.push(end - start);
    }
    return {
      stage,
      messages: gaps.length,
      p50Ms: percentile(gaps, 0.5),
      p90Ms: percentile(gaps, 0.9),
      maxMs: gaps.length === 0 ? NaN : Math.max(...gaps),
    };
  });
}

type EnvoiMode = 'live' | 'backlog';

const ENVOI_CASES: Record<EnvoiMode, string> = {
  live: 'Envoi: API → … → sink, sending meanwhile',
  backlog: 'Envoi: backlog of jobs, delivery restarted',
};

interface EnvoiFigures {
  mode: EnvoiMode;
  name: string;
  messages: number;
  /** First arrival to the N-th. */
  deliveredPerSecond: number;
  deliverySpanMs: number;
  acceptMs: number;
  /** live: messages that arrived before the last 202, and the rate after it. */
  arrivedDuringAccept: number | null;
  deliveredPerSecondAfterAccept: number | null;
  /** live: first request to the N-th arrival; backlog: delivery ready to the N-th arrival. */
  endToEndPerSecond: number;
  /** live: 202 received → message in the sink. */
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  latencyMaxMs: number | null;
  /** Mean size of what the sink received. */
  messageBytes: number;
  /** DNS questions the delivery service asked per message. */
  dnsQueriesPerMessage: number;
  settledMs: number | null;
  state: DeliveryState;
  apiSampleChecked: number;
  stages: StageFigures[] | null;
  /** Where the delivery jobs waited (in the stream, held by a worker) while the case ran. */
  workQueue: WorkQueueFigures | null;
  /**
   * CPU ms per message by process: live, from the first request until every status settled
   * (accepting included); backlog, from the restarted delivery's readiness until then.
   */
  cpuMsPerMessage: Record<string, number> | null;
  /** Share of one core each process used while delivering (live: after the last 202). */
  coreShareWhileDelivering: Record<string, number> | null;
  /**
   * PostgreSQL transactions (every session's, a statement outside a transaction counting one)
   * per message over the same span as cpuMsPerMessage: round trips' worth of work, whatever the
   * machine's load.
   */
  transactionsPerMessage: number;
  /**
   * The outcome events per EVENTS stream message the delivery service published for the case's
   * messages (outcomes recorded together travel in one `message.outcome_batch`); null: unread.
   */
  outcomeEventsPerStreamMessage: number | null;
}

interface EnvoiTarget {
  gateway: { baseUrl: string; ca: string };
  account: BenchAccount;
  sendingDomain: string;
  database: DeliveryDatabase;
  cpu: ProcessCpu;
  dns: DnsTestServer;
  delivery: DeliveryControl;
  natsUrl: string;
}

/** How often the delivery work queue is sampled while a case runs. */
const QUEUE_SAMPLE_MS = 100;

function sampleWorkQueue(target: EnvoiTarget): Promise<WorkQueueSampler> {
  return WorkQueueSampler.start(target.natsUrl, QUEUE_SAMPLE_MS, SETTINGS.runTimeoutMs);
}

/**
 * One Envoi run of `SETTINGS.messages` messages. live: sent through the API while the delivery
 * service runs. backlog: sent while the delivery service is stopped, then, once every job is in
 * the DELIVERY work queue, a delivery process is started and drains it (nothing else runs).
 */
async function runEnvoi(
  context: Context,
  target: EnvoiTarget,
  mode: EnvoiMode,
): Promise<{ figures: EnvoiFigures; problems: string[] }> {
  const { cpu, database } = target;
  const prefix = `${mode}-${context.runId}-`;
  const collector = context.router.collect(prefix, true);
  const recipients = Array.from(
    { length: SETTINGS.messages },
    (_, index) => `${prefix}${index}@${context.recipientDomain}`,
  );
  if (mode === 'backlog') {
    context.log('Envoi backlog: stopping the delivery service');
    context.log(`Envoi backlog: delivery service ${await target.delivery.stop()}`);
  }
  const dnsBefore = target.dns.queries.length;
  let queue = mode === 'live' ? await sampleWorkQueue(target) : null;
  const beforeSend = cpu.snapshot();
  let transactionsAtStart = await database.transactions();
  const sent = await sendThroughApi(
    target.gateway,
    target.account,
    `${SENDER_LOCAL_PART}@${target.sendingDomain}`,
    recipients,
    SETTINGS,
    context.signal,
  );
  context.log(
    `Envoi ${mode}: ${integer(SETTINGS.messages)} messages accepted in ${integer(sent.lastAcceptedAt - sent.startedAt)} ms; ${collector.count} already in the sink`,
  );
  let windowStart = cpu.snapshot();
  let windowStartAt = Date.now();
  let costStart = beforeSend;
  if (mode === 'backlog') {
    if (!(await database.waitForJobsPublished(SETTINGS.settleTimeoutMs, context.signal))) {
      throw new Error(`Envoi backlog: jobs still unpublished after ${SETTINGS.settleTimeoutMs} ms`);
    }
    context.log('Envoi backlog: every job is queued; starting a delivery process');
    await target.delivery.start();
    queue = await sampleWorkQueue(target);
    transactionsAtStart = await database.transactions();
    windowStart = cpu.snapshot();
    windowStartAt = Date.now();
    costStart = windowStart;
  }
  await waitForArrivals(collector, SETTINGS.messages, {
    timeoutMs: SETTINGS.runTimeoutMs,
    stallMs: SETTINGS.stallMs,
    signal: context.signal,
    what: `Envoi ${mode}`,
  });
  const delivered = cpu.snapshot();
  const deliveredAt = Date.now();
  const workQueue = (await queue?.stop()) ?? null;
  const dnsQueries = target.dns.queries.length - dnsBefore;
  context.log(`Envoi ${mode}: every message arrived; waiting for every status to be Delivered`);
  const uuids = [...sent.byRecipient.values()].map((accepted) => accepted.uuid);
  const settled = await database.waitForStatus(
    uuids,
    'Delivered',
    SETTINGS.settleTimeoutMs,
    context.signal,
  );
  const settledSnapshot = cpu.snapshot();
  const transactions = (await database.transactions()) - transactionsAtStart;
  const outcomeEventsPerStreamMessage = await database.outcomeEventsPerStreamMessage(uuids);

  const problems: string[] = [];
  if (settled.waitedMs === null) {
    problems.push(
      `statuses not all Delivered ${SETTINGS.settleTimeoutMs} ms after the last arrival: ${JSON.stringify(settled.state.statuses)}, attempts ${settled.state.attemptsDone}/${settled.state.attempts} finished`,
    );
  }
  if (settled.state.attempts !== SETTINGS.messages || settled.state.retried > 0) {
    problems.push(
      `${settled.state.attempts} attempts for ${SETTINGS.messages} messages (${settled.state.retried} messages attempted more than once): ${JSON.stringify(settled.state.attemptStatuses)}`,
    );
  }
  // Any duplicate has had the settling time to arrive.
  problems.push(...checkEnvoiArrivals(collector, sent, target.sendingDomain));
  const sample = await checkSampleThroughApi(
    target.gateway,
    target.account,
    [...sent.byRecipient.values()].map((accepted) => accepted.id),
  );
  problems.push(...sample.problems);

  const { firstByRecipient, latencies, stages } = await arrivalTimes(
    collector,
    sent,
    database,
    context.log,
  );
  const arrivals = [...firstByRecipient.values()];
  const rate = arrivalRate(arrivals);
  const lastArrival = Math.max(...arrivals.map((arrival) => arrival.receivedAt));
  const afterAccept = arrivals.filter((arrival) => arrival.receivedAt > sent.lastAcceptedAt);
  const windowMs = deliveredAt - windowStartAt;
  const live = mode === 'live';
  return {
    figures: {
      mode,
      name: ENVOI_CASES[mode],
      messages: SETTINGS.messages,
      deliveredPerSecond: rate.perSecond,
      deliverySpanMs: rate.spanMs,
      acceptMs: sent.lastAcceptedAt - sent.startedAt,
      arrivedDuringAccept: live ? arrivals.length - afterAccept.length : null,
      deliveredPerSecondAfterAccept:
        live && afterAccept.length > 1
          ? (afterAccept.length * 1000) / (lastArrival - sent.lastAcceptedAt)
          : null,
      endToEndPerSecond:
        (arrivals.length * 1000) / (lastArrival - (live ? sent.startedAt : windowStartAt)),
      latencyP50Ms: live ? percentile(latencies, 0.5) : null,
      latencyP99Ms: live ? percentile(latencies, 0.99) : null,
      latencyMaxMs: live ? Math.max(...latencies) : null,
      messageBytes:
        collector.arrivals.reduce((sum, arrival) => sum + (arrival.raw?.length ?? 0), 0) /
        Math.max(1, collector.count),
      dnsQueriesPerMessage: dnsQueries / SETTINGS.messages,
      settledMs: settled.waitedMs,
      state: settled.state,
      apiSampleChecked: sample.checked,
      stages,
      workQueue,
      cpuMsPerMessage: perUnit(cpuBetween(costStart, settledSnapshot), SETTINGS.messages),
      coreShareWhileDelivering:
        windowMs >= 500 ? perUnit(cpuBetween(windowStart, delivered), windowMs) : null,
      transactionsPerMessage: transactions / SETTINGS.messages,
      outcomeEventsPerStreamMessage,
    },
    problems: problems.map((problem) => `Envoi ${mode}: ${problem}`),
  };
}

/**
 * Each sent message's first arrival, the time from its 202 to that arrival, and the stage times
 * of the database's timestamps (null when they cannot be read).
 */
async function arrivalTimes(
  collector: ReceiptCollector,
  sent: SendPhase,
  database: DeliveryDatabase,
  log: (line: string) => void,
): Promise<{
  firstByRecipient: Map<string, Arrival>;
  latencies: number[];
  stages: StageFigures[] | null;
}> {
  const firstByRecipient = new Map<string, Arrival>();
  for (const arrival of collector.arrivals) {
    if (!firstByRecipient.has(arrival.recipient)) firstByRecipient.set(arrival.recipient, arrival);
  }
  const latencies: number[] = [];
  const receipts = new Map<string, number>();
  for (const [recipient, accepted] of sent.byRecipient) {
    const arrival = firstByRecipient.get(recipient);
    if (!arrival) continue;
    latencies.push(arrival.receivedAt - accepted.acceptedAt);
    receipts.set(accepted.uuid, arrival.receivedAt);
  }
  let stages: StageFigures[] | null = null;
  try {
    const uuids = [...sent.byRecipient.values()].map((accepted) => accepted.uuid);
    stages = stageFigures(await database.timelines(uuids), receipts);
  } catch (error) {
    log(`stage timings unavailable: ${String(error)}`);
  }
  return { firstByRecipient, latencies, stages };
}

/**
 * ratePerSecond: half of the live case's delivered msg/s, the rate the sends start at (open
 * loop); latencies: 202 received → message in the sink.
 */
interface HalfRateFigures extends OpenLoopLatency {
  liveDeliveredPerSecond: number;
  /** Recipients of each request: the live case's, or 1 (the informational run). */
  recipientsPerRequest: number;
  messages: number;
  stages: StageFigures[] | null;
  /** Where the delivery jobs waited (in the stream, held by a worker) while the sends ran. */
  workQueue: WorkQueueFigures | null;
  /** CPU ms per message from the first send until every message arrived. */
  cpuMsPerMessage: Record<string, number> | null;
}

/**
 * A latency run: sends of `recipientsPerRequest` recipients started on a fixed schedule, so that
 * messages go out at half of the live case's delivery rate, for about `halfRateSeconds`; each
 * message timed from its request's 202 to the sink. The target's run has the live case's request
 * shape (the rate measured with it, halved); the 1-recipient run shows what the same message rate
 * costs as single sends (informational: their accept path is most of its CPU).
 */
async function measureHalfRate(
  context: Context,
  target: EnvoiTarget,
  liveDeliveredPerSecond: number,
  recipientsPerRequest: number,
): Promise<{ figures: HalfRateFigures; problems: string[] }> {
  const prefix = `half${recipientsPerRequest}-${context.runId}-`;
  const collector = context.router.collect(prefix, true);
  const sender = `${SENDER_LOCAL_PART}@${target.sendingDomain}`;
  const messagesPerSecond = liveDeliveredPerSecond / 2;
  const byRecipient = new Map<string, Accepted>();
  let next = 0;
  const recipients = () =>
    Array.from(
      { length: recipientsPerRequest },
      () => `${prefix}${next++}@${context.recipientDomain}`,
    );
  const queue = await sampleWorkQueue(target);
  const startedAt = Date.now();
  const before = target.cpu.snapshot();
  const sample = await runOpenLoop({
    target: target.gateway,
    ratePerSecond: messagesPerSecond / recipientsPerRequest,
    count: Math.max(
      20,
      Math.round((messagesPerSecond * SETTINGS.halfRateSeconds) / recipientsPerRequest),
    ),
    next: () => sendRequest(target.account, sender, recipients()),
    check: (response) => {
      if (response.status !== 202)
        return `status ${response.status}: ${response.body.slice(0, 300)}`;
      try {
        for (const [recipient, entry] of acceptedEntries(response.body, Date.now())) {
          byRecipient.set(recipient, entry);
        }
        return null;
      } catch (error) {
        return error instanceof Error ? error.message : String(error);
      }
    },
    maxInFlight: SETTINGS.halfRateMaxInFlight,
    signal: context.signal,
  });
  const acceptedTimes = [...byRecipient.values()].map((accepted) => accepted.acceptedAt);
  const sent: SendPhase = {
    byRecipient,
    startedAt,
    lastAcceptedAt: Math.max(startedAt, ...acceptedTimes),
  };
  await waitForArrivals(collector, byRecipient.size, {
    timeoutMs: SETTINGS.runTimeoutMs,
    stallMs: SETTINGS.stallMs,
    signal: context.signal,
    what: 'Envoi at half rate',
  });
  const spent = cpuBetween(before, target.cpu.snapshot());
  const workQueue = await queue.stop();
  const uuids = [...byRecipient.values()].map((accepted) => accepted.uuid);
  const settled = await target.database.waitForStatus(
    uuids,
    'Delivered',
    SETTINGS.settleTimeoutMs,
    context.signal,
  );
  const { latencies, stages } = await arrivalTimes(collector, sent, target.database, context.log);
  const problems = checkEnvoiArrivals(collector, sent, target.sendingDomain);
  if (sample.failed > 0) {
    problems.push(`${sample.failed} sends not accepted, first: ${sample.firstFailure ?? '?'}`);
  }
  // The 1-recipient run may saturate the accept path: it shows that, it is not the target's run.
  if (sample.skipped > 0 && recipientsPerRequest > 1) {
    problems.push(
      `${sample.skipped} sends not started (${SETTINGS.halfRateMaxInFlight} in flight)`,
    );
  }
  if (settled.waitedMs === null) {
    problems.push(`statuses not all Delivered: ${JSON.stringify(settled.state.statuses)}`);
  }
  return {
    figures: {
      ...openLoopLatency(sample, latencies),
      // Messages per second (the open loop's rate is in requests).
      ratePerSecond: messagesPerSecond,
      liveDeliveredPerSecond,
      recipientsPerRequest,
      messages: byRecipient.size,
      stages,
      workQueue,
      cpuMsPerMessage: perUnit(spent, Math.max(1, byRecipient.size)),
    },
    problems: problems.map(
      (problem) => `Envoi at half rate (${recipientsPerRequest} per request): ${problem}`,
    ),
  };
}

/** The raw message Envoi built (as the sink got it) without its DKIM signature. */
function templateFrom(arrival: Arrival | undefined): string {
  if (!arrival?.raw) throw new Error('no warm-up message to copy for the bare sender');
  return arrival.raw
    .toString('utf8')
    .replace(/^DKIM-Signature:[^\r\n]*(\r?\n[ \t][^\r\n]*)*\r?\n/im, '');
}

async function warmUpEnvoi(
  context: Context,
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
  sendingDomain: string,
  database: DeliveryDatabase,
): Promise<string> {
  const prefix = `warm-${context.runId}-`;
  const collector = context.router.collect(prefix, true);
  const recipients = Array.from(
    { length: SETTINGS.envoiWarmupMessages },
    (_, index) => `${prefix}${index}@${context.recipientDomain}`,
  );
  const sent = await sendThroughApi(
    gateway,
    account,
    `${SENDER_LOCAL_PART}@${sendingDomain}`,
    recipients,
    SETTINGS,
    context.signal,
  );
  await waitForArrivals(collector, recipients.length, {
    timeoutMs: 60_000,
    stallMs: SETTINGS.stallMs,
    signal: context.signal,
    what: 'Envoi warm-up',
  });
  const settled = await database.waitForStatus(
    [...sent.byRecipient.values()].map((accepted) => accepted.uuid),
    'Delivered',
    SETTINGS.settleTimeoutMs,
    context.signal,
  );
  if (settled.waitedMs === null) {
    throw new Error(
      `Envoi warm-up: statuses ${JSON.stringify(settled.state.statuses)} after ${SETTINGS.settleTimeoutMs} ms`,
    );
  }
  return templateFrom(collector.arrivals[0]);
}

// ---------------------------------------------------------------------------------------------
// Report

function bareSummary(
  key: BareCaseKey,
  rounds: Map<BareCaseKey, BareRound[]>,
): BareFigures | undefined {
  const definition = BARE_CASES.find((candidate) => candidate.key === key);
  const measured = rounds.get(key) ?? [];
  if (!definition || measured.length === 0) return undefined;
  const mean = (pick: (round: BareRound) => number) =>
    measured.reduce((sum, round) => sum + pick(round), 0) / measured.length;
  return {
    key,
    name: definition.name,
    starttls: definition.starttls,
    dkim: definition.dkim,
    deliveredPerSecond: mean((round) => round.deliveredPerSecond),
    senderCpuMsPerMessage: mean((round) => round.senderCpuMsPerMessage),
    rounds: measured,
  };
}

function printEnvoiDetails(envoi: EnvoiFigures): void {
  console.log(`\n${envoi.name}`);
  if (envoi.mode === 'live') {
    console.log(
      `  accepting ${integer(envoi.messages)} messages took ${integer(envoi.acceptMs)} ms (${integer(envoi.arrivedDuringAccept ?? NaN)} arrived meanwhile), then ${integer(envoi.deliveredPerSecondAfterAccept ?? NaN)} msg/s; first request to last arrival: ${integer(envoi.endToEndPerSecond)} msg/s`,
    );
    console.log(
      `  202 → in the sink: p50 ${integer(envoi.latencyP50Ms ?? NaN)} ms, p99 ${integer(envoi.latencyP99Ms ?? NaN)} ms, max ${integer(envoi.latencyMaxMs ?? NaN)} ms (mostly the queue: the later accepted, the longer the wait)`,
    );
  } else {
    console.log(
      `  accepted in ${integer(envoi.acceptMs)} ms with the delivery service stopped; delivery process ready to last arrival: ${integer(envoi.endToEndPerSecond)} msg/s`,
    );
  }
  console.log(
    `  checks: ${envoi.state.statuses['Delivered'] ?? 0} of ${envoi.messages} Delivered (${envoi.settledMs === null ? 'NOT settled' : `${integer(envoi.settledMs)} ms after the last arrival`}), ${envoi.state.attempts} attempts, ${envoi.state.retried} retried, ${envoi.apiSampleChecked} read back through the API; ${fixed(envoi.dnsQueriesPerMessage, 1)} DNS questions per message`,
  );
  for (const line of stageLines(envoi.stages)) console.log(`  ${line}`);
  for (const line of workQueueLines(envoi.workQueue)) console.log(`  ${line}`);
  console.log(
    `  CPU ms per message (${envoi.mode === 'live' ? 'accepting included' : 'delivery only'}): ${cpuEntries(envoi.cpuMsPerMessage, (value) => value.toFixed(2))}`,
  );
  console.log(
    `  share of one core while delivering: ${cpuEntries(envoi.coreShareWhileDelivering, (value) => `${Math.round(value * 100)} %`)}`,
  );
  console.log(
    `  PostgreSQL transactions per message (${envoi.mode === 'live' ? 'accepting included' : 'delivery only'}): ${fixed(envoi.transactionsPerMessage, 2)}`,
  );
  console.log(
    `  outcome events per EVENTS stream message (delivery's outcome batches): ${fixed(envoi.outcomeEventsPerStreamMessage ?? NaN, 1)}`,
  );
}

/** Prints one line per case and the details; returns each Envoi case's ratio to bare + DKIM. */
function printReport(envoi: EnvoiFigures[], bare: BareFigures[]): Record<EnvoiMode, number> {
  const reference = bare.find((figures) => figures.key === 'dkim')?.deliveredPerSecond ?? NaN;
  console.log(
    `\nDelivered messages per second into the sink, first arrival to the ${integer(SETTINGS.messages)}th (~${integer(envoi[0]?.messageBytes ?? NaN)} B messages; bare: mean of a round before and one after Envoi)`,
  );
  console.log(
    `${'case'.padEnd(48)} ${'msg/s'.padStart(6)} ${'× bare+DKIM'.padStart(11)} ${'sender CPU ms/msg'.padStart(18)}  rounds`,
  );
  for (const figures of bare) {
    console.log(
      [
        figures.name.padEnd(48),
        integer(figures.deliveredPerSecond).padStart(6),
        fixed(figures.deliveredPerSecond / reference, 3).padStart(11),
        fixed(figures.senderCpuMsPerMessage, 2).padStart(18),
        ' ',
        figures.rounds.map((round) => integer(round.deliveredPerSecond)).join(' / '),
      ].join(' '),
    );
  }
  const ratios = { live: NaN, backlog: NaN };
  for (const figures of envoi) {
    ratios[figures.mode] = figures.deliveredPerSecond / reference;
    const deliveryCpu = figures.cpuMsPerMessage?.['delivery'];
    console.log(
      [
        figures.name.padEnd(48),
        integer(figures.deliveredPerSecond).padStart(6),
        fixed(ratios[figures.mode], 3).padStart(11),
        (deliveryCpu === undefined ? '–' : `${fixed(deliveryCpu, 2)} (delivery)`).padStart(18),
      ].join(' '),
    );
  }
  for (const figures of envoi) printEnvoiDetails(figures);
  return ratios;
}

function stageLines(stages: readonly StageFigures[] | null): string[] {
  if (!stages) return [];
  return [
    `${'stage (ms)'.padEnd(58)} ${'p50'.padStart(6)} ${'p90'.padStart(6)} ${'max'.padStart(6)}`,
    ...stages.map(
      (stage) =>
        `  ${stage.stage.padEnd(56)} ${integer(stage.p50Ms).padStart(6)} ${integer(stage.p90Ms).padStart(6)} ${integer(stage.maxMs).padStart(6)}`,
    ),
  ];
}

function cpuEntries(
  entries: Record<string, number> | null,
  format: (value: number) => string,
): string {
  return entries === null
    ? '(no /proc)'
    : Object.entries(entries)
        .map(([label, value]) => `${label} ${format(value)}`)
        .join(', ');
}

function printHalfRate(figures: HalfRateFigures): void {
  console.log(
    `\nEnvoi at half rate: ${integer(figures.messages)} messages, ${figures.recipientsPerRequest} per request, sent at ${integer(figures.ratePerSecond)} msg/s (half the live ${integer(figures.liveDeliveredPerSecond)}), open loop`,
  );
  console.log(
    `  202 → in the sink: p50 ${integer(figures.latencyP50Ms)} ms, p99 ${integer(figures.latencyP99Ms)} ms, max ${integer(figures.latencyMaxMs)} ms${figures.skipped > 0 ? ` (${figures.skipped} sends not started: ${SETTINGS.halfRateMaxInFlight} already in flight)` : ''}`,
  );
  for (const line of stageLines(figures.stages)) console.log(`  ${line}`);
  for (const line of workQueueLines(figures.workQueue)) console.log(`  ${line}`);
  console.log(
    `  CPU ms per message: ${cpuEntries(figures.cpuMsPerMessage, (value) => value.toFixed(2))}`,
  );
}

/** CPU ms per message of our processes together (without the rest of the machine). */
function ownCpu(entries: Record<string, number> | null): number {
  return Object.entries(entries ?? {})
    .filter(([label]) => label !== OTHER_PROCESSES)
    .reduce((sum, [, value]) => sum + value, 0);
}

/** Where a delivery case's time goes, beside the bare sender with DKIM. */
function deliveryCostLines(figures: EnvoiFigures | undefined, bare: BareFigures | undefined) {
  if (!figures) return ['(not measured)'];
  const reference = bare?.deliveredPerSecond ?? NaN;
  const cpuPerMessage = ownCpu(figures.cpuMsPerMessage);
  const targetRate = reference * TARGETS.ratioToBareWithDkim;
  const cores = os.cpus().length;
  return [
    `one message takes ${fixed(1000 / figures.deliveredPerSecond, 2)} ms of wall time (bare + DKIM: ${fixed(1000 / reference, 2)} ms)`,
    `CPU ms per message ${fixed(cpuPerMessage, 2)} (${figures.mode === 'live' ? 'accepting included' : 'delivery only'}): ${cpuEntries(figures.cpuMsPerMessage, (value) => value.toFixed(2))}; bare sender: ${fixed(bare?.senderCpuMsPerMessage ?? NaN, 2)}`,
    `share of one core while delivering: ${cpuEntries(figures.coreShareWhileDelivering, (value) => `${Math.round(value * 100)} %`)}`,
    `at ${integer(targetRate)} msg/s (${TARGETS.ratioToBareWithDkim} × bare) this CPU per message would keep ${fixed((cpuPerMessage * targetRate) / 1000, 1)} cores busy (the machine has ${cores}): it must fall below ${fixed((1000 * cores) / targetRate, 2)} ms`,
    ...stageLines(figures.stages),
    ...workQueueLines(figures.workQueue),
  ];
}

function deliveryTargets(
  envoi: readonly EnvoiFigures[],
  bare: readonly BareFigures[],
  halfRate: HalfRateFigures | null,
): TargetResult[] {
  const reference = bare.find((figures) => figures.key === 'dkim');
  const ratio = (mode: EnvoiMode) => {
    const figures = envoi.find((candidate) => candidate.mode === mode);
    return atLeast({
      target: `${ENVOI_CASES[mode]}: × the bare pooled sender with DKIM`,
      value: (figures?.deliveredPerSecond ?? NaN) / (reference?.deliveredPerSecond ?? NaN),
      threshold: TARGETS.ratioToBareWithDkim,
      format: (value) => `${fixed(value, 3)} × bare`,
      breakdown: deliveryCostLines(figures, reference),
    });
  };
  return [
    ratio('live'),
    ratio('backlog'),
    below({
      target: `202 → in the sink at half the live rate (${integer(halfRate?.ratePerSecond ?? NaN)} msg/s, ${halfRate?.recipientsPerRequest ?? NaN} recipients per request as in the live case): p99`,
      value: halfRate?.latencyP99Ms ?? NaN,
      threshold: TARGETS.halfRateP99Ms,
      format: (value) => `${integer(value)} ms`,
      breakdown: halfRate
        ? [
            `p50 ${integer(halfRate.latencyP50Ms)} ms, max ${integer(halfRate.latencyMaxMs)} ms; per stage:`,
            ...stageLines(halfRate.stages),
            ...workQueueLines(halfRate.workQueue),
            `CPU ms per message: ${cpuEntries(halfRate.cpuMsPerMessage, (value) => value.toFixed(2))}`,
          ]
        : ['(not measured)'],
    }),
  ];
}

// ---------------------------------------------------------------------------------------------

runBenchmark('delivery-throughput', async ({ root, dataDir, stoppers, signal, log, keepData }) => {
  // BENCH_PROFILE_DELIVERY=1: the restarted delivery process writes a V8 tick log
  // (`node --prof-process <dataDir>/profiles/delivery-2.v8.log`); =cpu: a --cpu-prof profile
  // (<dataDir>/profiles/delivery-2.cpuprofile). Kept with the data.
  const profileDir =
    process.env['BENCH_PROFILE_DELIVERY'] === undefined ? null : path.join(dataDir, 'profiles');
  if (profileDir !== null) keepData();
  const runId = randomUUID().slice(0, 8);
  const stack = await startDeliveryStack({ root, dataDir, stoppers, signal, log }, runId, {
    RETRY_SCHEDULE_MS: SETTINGS.retryScheduleMs,
  });
  const { platform, sinkPort, router, dns, recipientDomain, database, gateway, account } = stack;
  const { sendingDomain } = stack;
  const bareSender: BareSender = await BareProcess.start(
    'bare-sender',
    { run: BARE_RUN, result: BARE_RESULT },
    { root, dataDir },
    stoppers,
  );

  const cpu = new ProcessCpu(BENCH_LABEL);
  for (const service of platform.services) cpu.label(service.child.pid, service.name);
  cpu.label(bareSender.pid, 'bare sender');
  const memory = new StackMemory(cpu, new Set([BENCH_LABEL, 'bare sender']));
  memory.recordIdle();
  memory.start();
  const context: Context = { runId, signal, log, sinkPort, router, recipientDomain };
  const target: EnvoiTarget = {
    gateway,
    account,
    sendingDomain,
    database,
    cpu,
    dns,
    natsUrl: platform.natsUrl,
    delivery: new DeliveryControl(
      platform,
      platform.serviceEnv,
      root,
      dataDir,
      stoppers,
      cpu,
      profileDir,
    ),
  };

  log(`Envoi warm-up: ${SETTINGS.envoiWarmupMessages} messages`);
  const template = await warmUpEnvoi(context, gateway, account, sendingDomain, database);
  log(
    `bare block, round 1 (${SETTINGS.bareWarmupMessages} warm-up + ${integer(SETTINGS.messages)} messages per case)`,
  );
  const rounds = new Map<BareCaseKey, BareRound[]>();
  const bareRound = async (round: number) => {
    for (const bareCase of BARE_CASES) {
      const figures = await runBare(context, bareSender, bareCase, round, template, sendingDomain);
      rounds.set(bareCase.key, [...(rounds.get(bareCase.key) ?? []), figures]);
    }
  };
  await bareRound(1);

  const envoi: EnvoiFigures[] = [];
  const problems: string[] = [];
  for (const mode of ['live', 'backlog'] as const) {
    log(
      `Envoi ${mode}: ${integer(SETTINGS.messages)} messages in requests of ${SETTINGS.recipientsPerRequest} recipients, ${SETTINGS.requestsInFlight} in flight`,
    );
    const run = await runEnvoi(context, target, mode);
    log(`Envoi ${mode}: ${integer(run.figures.deliveredPerSecond)} msg/s into the sink`);
    envoi.push(run.figures);
    problems.push(...run.problems);
  }

  const live = envoi.find((figures) => figures.mode === 'live');
  let halfRate: HalfRateFigures | null = null;
  let halfRateOneRecipient: HalfRateFigures | null = null;
  if (live && Number.isFinite(live.deliveredPerSecond)) {
    for (const recipientsPerRequest of [SETTINGS.recipientsPerRequest, 1]) {
      log(
        `Envoi at half rate: ${recipientsPerRequest}-recipient sends, ${integer(live.deliveredPerSecond / 2)} msg/s (half the live rate) for ~${SETTINGS.halfRateSeconds} s, open loop`,
      );
      const run = await measureHalfRate(
        context,
        target,
        live.deliveredPerSecond,
        recipientsPerRequest,
      );
      if (recipientsPerRequest === 1) halfRateOneRecipient = run.figures;
      else halfRate = run.figures;
      problems.push(...run.problems);
    }
  }
  const memoryReport = memory.stop();

  log('bare block, round 2');
  await bareRound(2);

  const bare = BARE_CASES.map((bareCase) => bareSummary(bareCase.key, rounds)).filter(
    (figures): figures is BareFigures => figures !== undefined,
  );
  const ratios = printReport(envoi, bare);
  problems.push(
    ...bare.flatMap((figures) =>
      figures.rounds
        .filter((round) => round.duplicates > 0)
        .map((round) => `${figures.name}, round ${round.round}: ${round.duplicates} duplicates`),
    ),
    ...(router.unclaimed > 0
      ? [`${router.unclaimed} unexpected messages at the sink (first: ${router.firstUnclaimed})`]
      : []),
  );

  if (halfRate) printHalfRate(halfRate);
  if (halfRateOneRecipient) printHalfRate(halfRateOneRecipient);
  console.log('\nMemory of the stack (every service, nats-server, PostgreSQL)');
  for (const line of memoryLines(memoryReport)) console.log(line);
  const targets = deliveryTargets(envoi, bare, halfRate);
  for (const line of targetLines(targets)) console.log(line);

  return {
    report: {
      settings: SETTINGS,
      envoiToBareWithDkim: ratios,
      envoi,
      bare,
      halfRate,
      halfRateOneRecipient,
      memory: memoryReport,
      targets,
      problems,
    },
    problems,
  };
});
