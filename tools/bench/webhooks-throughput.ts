import 'reflect-metadata';

import { randomUUID } from 'node:crypto';
import path from 'node:path';

import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { WEBHOOK_EVENT_FLAGS } from '@envoi/contracts-webhooks';
import { ensureDevCertificate, readCertificate } from '@envoi/shared-infra';
import { connectNats } from '@envoi/shared-nats';
import type { NatsConnection } from 'nats';

import { BareProcess } from './bare-process';
import {
  BARE_WEBHOOKS_RESULT,
  BARE_WEBHOOKS_RUN,
  type BareWebhooksRunRequest,
  type BareWebhooksRunResult,
} from './bare-webhooks.constants';
import { fixed, integer } from './bench-format';
import { type BenchAccount, createBenchAccount, startBenchPlatform } from './bench-platform';
import { runBenchmark } from './bench-run';
import { percentile, sendTrusted } from './load';
import { cpuBetween, ProcessCpu } from './process-cpu';
import { atLeast, below, targetLines, type TargetResult } from './targets';
import { OUTCOME_EVENTS_PER_STREAM_MESSAGE, outcomeBatch } from './webhook-bench-batches';
import {
  type BenchEndpoint,
  endpointsOf,
  type StreamEvent,
  streamEvent,
} from './webhook-bench-events';
import {
  arrivalsPerSecond,
  arrivalTimes,
  type DeliveryLatencies,
  deliveryLatencies,
  type ExpectedDelivery,
  waitForArrivals,
  type WebhookReceipts,
} from './webhook-receipts';
import { BenchWebhookReceiver } from './webhook-receiver-https';
import { WebhooksDatabase } from './webhooks-database';

/**
 * `npm run bench:webhooks` (issue 15): events per second fanned out by the webhooks service from
 * the EVENTS stream to a local HTTPS receiver (stream → fan-out signs and POSTs → deliveries and
 * attempts stored in PostgreSQL; retries claimed from there), next to a bare loop in the same run
 * that signs and POSTs the same bodies to the same receiver with the same concurrency (in all and
 * per endpoint), without a database or a bus. Then the latency from an event on the stream to its
 * arrival at the receiver at half of Envoi's peak rate (open loop). Every delivery must arrive once
 * per subscribed endpoint.
 */

const SETTINGS = {
  /**
   * Events of each measured run (each reaches the global webhook and one scoped webhook): with
   * 2 000 a run lasted about half a second, and one garbage collection in any process moved its
   * CPU per event by 0.02 ms and the ratio by up to 0.1.
   */
  events: 10_000,
  /**
   * Warm-ups long enough for each block to reach its steady rate: with 100 and 200 the bare loop
   * still ran 1.7 × faster in its second round than in its first (JIT compilation).
   */
  envoiWarmupEvents: 1_000,
  bareWarmupEvents: 2_000,
  /** Sending domains, one scoped webhook each; event i comes from domain i mod this. */
  scopedDomains: 3,
  /** Publishes awaiting their JetStream acknowledgement at once, at full speed. */
  publishesInFlight: 256,
  /** The webhooks service's defaults (WEBHOOK_ENDPOINT_CONCURRENCY, WEBHOOK_CONCURRENCY). */
  endpointConcurrency: 4,
  replicaConcurrency: 64,
  /** A run gives up after this long, or when nothing arrived for `stallMs`. */
  runTimeoutMs: 120_000,
  stallMs: 30_000,
  /** The latency run: publishes at half the peak rate for about this long (open loop). */
  halfRateSeconds: 8,
} as const;

const TARGETS = { ratioToBare: 0.5, halfRateP99Ms: 1_000 } as const;

const BENCH_LABEL = 'bench (receiver, publisher)';
const POLL_MS = 20;

type BareWebhooks = BareProcess<BareWebhooksRunRequest, BareWebhooksRunResult>;

interface Setup {
  account: BenchAccount;
  domains: string[];
  endpoints: BenchEndpoint[];
}

interface Context extends Setup {
  receipts: WebhookReceipts;
  signal: AbortSignal;
  log: (line: string) => void;
}

/** Sending domains (not verified: a scoped webhook needs only that the account holds them). */
async function createDomains(
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
  runId: string,
): Promise<string[]> {
  const domains: string[] = [];
  for (let index = 0; index < SETTINGS.scopedDomains; index++) {
    const domain = `hooks${index}-${runId}.bench.example`;
    const created = await sendTrusted(gateway, {
      method: 'POST',
      path: `/v2/accounts/${account.accountId}/domains`,
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ domain }),
    });
    if (created.status !== 201) {
      throw new Error(`creating domain ${domain}: ${created.status} ${created.body.slice(0, 300)}`);
    }
    domains.push(domain);
  }
  return domains;
}

/** One global webhook and one scoped to each domain, every event flag on. */
async function createEndpoints(
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
  receiver: BenchWebhookReceiver,
  domains: readonly string[],
): Promise<BenchEndpoint[]> {
  const flags = Object.fromEntries(WEBHOOK_EVENT_FLAGS.map((flag) => [flag, true]));
  const wanted = [
    { name: 'global', domain: null },
    ...domains.map((domain, index) => ({ name: `scoped-${index}`, domain })),
  ];
  const endpoints: BenchEndpoint[] = [];
  for (const { name, domain } of wanted) {
    const url = receiver.url(name);
    const created = await sendTrusted(gateway, {
      method: 'POST',
      path: `/v2/accounts/${account.accountId}/webhooks`,
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: `bench ${name}`,
        url,
        ...flags,
        ...(domain === null ? { scope: 'global' } : { scope: 'scoped', domains: [domain] }),
      }),
    });
    if (created.status !== 201) {
      throw new Error(`creating webhook ${name}: ${created.status} ${created.body.slice(0, 300)}`);
    }
    const record = JSON.parse(created.body) as { id: string; secret: string };
    endpoints.push({ name, url, webhookId: record.id, secret: record.secret, domain });
  }
  return endpoints;
}

/** Polls until every expected delivery arrived; throws after the run's limits. */
function waitForDeliveries(
  context: Context,
  expected: readonly ExpectedDelivery[],
  what: string,
): Promise<void> {
  return waitForArrivals(
    context.receipts,
    expected,
    { runTimeoutMs: SETTINGS.runTimeoutMs, stallMs: SETTINGS.stallMs, pollMs: POLL_MS },
    context.signal,
    what,
  );
}

function expectedOf(
  context: Setup,
  events: ReadonlyArray<{ id: string; domain: string; publishedAt: number }>,
): ExpectedDelivery[] {
  return events.map(({ id, domain, publishedAt }) => ({
    eventId: id,
    endpoints: endpointsOf(context.endpoints, domain).map((endpoint) => endpoint.name),
    publishedAt,
  }));
}

// ---------------------------------------------------------------------------------------------
// The bare block

interface BareRound {
  round: number;
  deliveries: number;
  /** Receiver side: first to last measured arrival. */
  deliveriesPerSecond: number;
  eventsPerSecond: number;
  senderCpuMsPerDelivery: number;
}

async function runBare(
  context: Context,
  bare: BareWebhooks,
  concurrency: number,
  ca: string,
  round: number,
): Promise<BareRound> {
  const result = await bare.run(
    {
      endpoints: context.endpoints,
      accountId: context.account.accountId,
      domains: context.domains,
      warmup: SETTINGS.bareWarmupEvents,
      count: SETTINGS.events,
      concurrency,
      endpointConcurrency: SETTINGS.endpointConcurrency,
      ca,
    },
    SETTINGS.runTimeoutMs + 10_000,
    context.signal,
  );
  if (result.errors > 0) {
    throw new Error(`bare round ${round}: ${result.errors} calls failed: ${result.firstError}`);
  }
  const expected = expectedOf(
    context,
    result.measuredEventIds.map((id, index) => ({
      id,
      domain: context.domains[index % context.domains.length] ?? '',
      publishedAt: NaN,
    })),
  );
  await waitForDeliveries(context, expected, `bare round ${round}`);
  const deliveriesPerSecond = arrivalsPerSecond(arrivalTimes(context.receipts, expected));
  const figures: BareRound = {
    round,
    deliveries: result.posted,
    deliveriesPerSecond,
    eventsPerSecond: (deliveriesPerSecond * SETTINGS.events) / result.posted,
    senderCpuMsPerDelivery: result.cpuMs / result.posted,
  };
  context.log(
    `bare signed POST loop, round ${round}: ${integer(figures.eventsPerSecond)} events/s = ${integer(figures.deliveriesPerSecond)} deliveries/s (${fixed(figures.senderCpuMsPerDelivery, 3)} ms sender CPU per delivery)`,
  );
  return figures;
}

// ---------------------------------------------------------------------------------------------
// Envoi

interface Published {
  id: string;
  domain: string;
  /** performance.now() when the publish was started (or scheduled, in the open loop). */
  publishedAt: number;
}

/**
 * Publishes the events in one `message.outcome_batch` as the delivery service's outbox relay does
 * (msgID: the batch id).
 */
function publishBatch(nats: NatsConnection, events: StreamEvent[]): Promise<unknown> {
  const batch = outcomeBatch(events);
  return nats
    .jetstream()
    .publish(DeliveryStreamSubjects.outcomeBatch.name, JSON.stringify(batch), { msgID: batch.id });
}

/** Events `from` to `to` (excluded), each from the next of the sending domains in turn. */
function benchEvents(context: Setup, from: number, to: number): Array<[StreamEvent, string]> {
  const events: Array<[StreamEvent, string]> = [];
  for (let index = from; index < to; index++) {
    const domain = context.domains[index % context.domains.length] ?? '';
    events.push([streamEvent(context.account.accountId, domain, index), domain]);
  }
  return events;
}

/**
 * `count` events at full speed in batches of `eventsPerBatch`, `publishesInFlight` batches
 * awaiting their JetStream acknowledgement at once.
 */
async function publishAtFullSpeed(
  nats: NatsConnection,
  context: Setup,
  count: number,
  eventsPerBatch: number,
): Promise<Published[]> {
  const published: Published[] = [];
  const pending = new Set<Promise<unknown>>();
  for (let index = 0; index < count; index += eventsPerBatch) {
    if (pending.size >= SETTINGS.publishesInFlight) await Promise.race(pending);
    const events = benchEvents(context, index, Math.min(count, index + eventsPerBatch));
    const publishedAt = performance.now();
    for (const [event, domain] of events) published.push({ id: event.id, domain, publishedAt });
    const batch = events.map(([event]) => event);
    const sent: Promise<unknown> = publishBatch(nats, batch).finally(() => pending.delete(sent));
    pending.add(sent);
  }
  await Promise.all(pending);
  return published;
}

/**
 * Open loop: event i is due at start + i ÷ rate, and each batch of `eventsPerBatch` is published
 * when its last event is due, whatever the acknowledgements do.
 */
async function publishAtRate(
  nats: NatsConnection,
  context: Context,
  ratePerSecond: number,
  count: number,
  eventsPerBatch: number,
): Promise<Published[]> {
  const published: Published[] = [];
  const pending: Array<Promise<unknown>> = [];
  const startedAt = performance.now();
  for (let index = 0; index < count; index += eventsPerBatch) {
    context.signal.throwIfAborted();
    const end = Math.min(count, index + eventsPerBatch);
    const scheduledAt = startedAt + ((end - 1) * 1000) / ratePerSecond;
    const wait = scheduledAt - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const events = benchEvents(context, index, end);
    const publishedAt = Math.min(scheduledAt, performance.now());
    for (const [event, domain] of events) published.push({ id: event.id, domain, publishedAt });
    pending.push(
      publishBatch(
        nats,
        events.map(([event]) => event),
      ),
    );
  }
  await Promise.all(pending);
  return published;
}

interface EnvoiFigures {
  events: number;
  deliveries: number;
  /** Receiver side: first to last arrival. */
  deliveriesPerSecond: number;
  eventsPerSecond: number;
  /** First publish to the last arrival. */
  endToEndEventsPerSecond: number;
  publishSeconds: number;
  cpuMsPerEvent: Record<string, number> | null;
  databaseTransactionsPerEvent: number;
  stages: StageFigures[];
  attemptsPerDelivery: number;
  /** Events per `message.outcome_batch` published. */
  eventsPerStreamMessage: number;
}

interface StageFigures {
  stage: string;
  deliveries: number;
  p50Ms: number;
  p99Ms: number;
}

/** Published → fan-out transaction (the delivery row's created_at) → arrival at the receiver. */
async function stageFigures(
  database: WebhooksDatabase,
  context: Setup & { receipts: WebhookReceipts },
  published: readonly Published[],
): Promise<{ stages: StageFigures[]; attemptsPerDelivery: number }> {
  const rows = await database.deliveriesOf(published.map((event) => event.id));
  const publishedAt = new Map(published.map((event) => [event.id, event.publishedAt]));
  const endpointOf = new Map(context.endpoints.map((endpoint) => [endpoint.webhookId, endpoint]));
  const inStream: number[] = [];
  const inWorker: number[] = [];
  const toFirstAttempt: number[] = [];
  const attemptToStored: number[] = [];
  for (const row of rows) {
    const written = row.createdAt - performance.timeOrigin;
    const start = publishedAt.get(row.eventId);
    if (start !== undefined) inStream.push(written - start);
    const endpoint = endpointOf.get(row.webhookId);
    const arrival = endpoint && context.receipts.firstArrival(endpoint.name, row.eventId);
    if (arrival !== undefined) inWorker.push(arrival - written);
    if (row.firstAttemptAt === null) continue;
    const attempted = row.firstAttemptAt - performance.timeOrigin;
    if (start !== undefined) toFirstAttempt.push(attempted - start);
    attemptToStored.push(written - attempted);
  }
  const stage = (name: string, values: number[]): StageFigures => ({
    stage: name,
    deliveries: values.length,
    p50Ms: percentile(values, 0.5),
    p99Ms: percentile(values, 0.99),
  });
  return {
    stages: [
      stage('published → fan-out transaction (JetStream, consumer pull)', inStream),
      stage('fan-out transaction → at the receiver (commit, claim, sign, POST)', inWorker),
      // A first attempt is made straight from the stream, and stored after it (negative above).
      stage(
        'published → first attempt started (JetStream, consumer pull, endpoint queue)',
        toFirstAttempt,
      ),
      stage('first attempt started → delivery row written (call, batch, store)', attemptToStored),
    ],
    attemptsPerDelivery: rows.reduce((sum, row) => sum + row.attempts, 0) / rows.length,
  };
}

/** Warms Envoi up with events one per stream message, as a replica's first outcomes come. */
async function warmUpEnvoi(context: Context, nats: NatsConnection): Promise<void> {
  const warm = await publishAtFullSpeed(nats, context, SETTINGS.envoiWarmupEvents, 1);
  await waitForDeliveries(context, expectedOf(context, warm), 'Envoi warm-up');
}

/** A measured run of `SETTINGS.events` events, `eventsPerStreamMessage` to a stream message. */
async function runEnvoi(
  context: Context,
  nats: NatsConnection,
  database: WebhooksDatabase,
  cpu: ProcessCpu,
  eventsPerStreamMessage: number,
): Promise<EnvoiFigures> {
  const cpuBefore = cpu.snapshot();
  const transactionsBefore = await database.transactions();
  const started = performance.now();
  const published = await publishAtFullSpeed(
    nats,
    context,
    SETTINGS.events,
    eventsPerStreamMessage,
  );
  const publishSeconds = (performance.now() - started) / 1000;
  const expected = expectedOf(context, published);
  await waitForDeliveries(context, expected, 'Envoi');
  const cpuAfter = cpu.snapshot();
  const transactionsAfter = await database.transactions();
  const arrivals = arrivalTimes(context.receipts, expected);
  const deliveries = arrivals.length;
  const deliveriesPerSecond = arrivalsPerSecond(arrivals);
  const spent = cpuBetween(cpuBefore, cpuAfter);
  const { stages, attemptsPerDelivery } = await stageFigures(database, context, published);
  return {
    events: SETTINGS.events,
    deliveries,
    deliveriesPerSecond,
    eventsPerSecond: (deliveriesPerSecond * SETTINGS.events) / deliveries,
    endToEndEventsPerSecond: (SETTINGS.events * 1000) / (Math.max(...arrivals) - started),
    publishSeconds,
    cpuMsPerEvent:
      spent === null
        ? null
        : Object.fromEntries(
            Object.entries(spent).map(([label, ms]) => [label, ms / SETTINGS.events]),
          ),
    databaseTransactionsPerEvent: (transactionsAfter - transactionsBefore) / SETTINGS.events,
    stages,
    attemptsPerDelivery,
    eventsPerStreamMessage,
  };
}

interface LatencyFigures extends DeliveryLatencies {
  ratePerSecond: number;
  events: number;
  stages: StageFigures[];
  /** Events per `message.outcome_batch` published. */
  eventsPerStreamMessage: number;
}

async function runHalfRate(
  context: Context,
  nats: NatsConnection,
  database: WebhooksDatabase,
  peakEventsPerSecond: number,
): Promise<LatencyFigures> {
  const ratePerSecond = Math.max(1, Math.floor(peakEventsPerSecond / 2));
  const events = Math.max(10, Math.round(ratePerSecond * SETTINGS.halfRateSeconds));
  const eventsPerStreamMessage = OUTCOME_EVENTS_PER_STREAM_MESSAGE;
  context.log(
    `latency: publishing ${integer(events)} events at ${integer(ratePerSecond)} events/s, ${eventsPerStreamMessage} per message.outcome_batch`,
  );
  const published = await publishAtRate(
    nats,
    context,
    ratePerSecond,
    events,
    eventsPerStreamMessage,
  );
  const expected = expectedOf(context, published);
  await waitForDeliveries(context, expected, 'half rate');
  const { stages } = await stageFigures(database, context, published);
  return {
    ratePerSecond,
    events,
    ...deliveryLatencies(context.receipts, expected),
    stages,
    eventsPerStreamMessage,
  };
}

// ---------------------------------------------------------------------------------------------
// The report

function cpuLines(cpuMsPerEvent: Record<string, number> | null): string[] {
  if (cpuMsPerEvent === null) return ['CPU per event: unknown (no /proc)'];
  return Object.entries(cpuMsPerEvent)
    .sort(([, a], [, b]) => b - a)
    .filter(([, ms]) => ms >= 0.005)
    .map(([label, ms]) => `CPU per event, ${label}: ${fixed(ms, 3)} ms`);
}

function breakdown(envoi: EnvoiFigures, bare: BareRound[], latency: LatencyFigures): string[] {
  const stageLine = (prefix: string, stage: StageFigures) =>
    `${prefix}${stage.stage}: p50 ${integer(stage.p50Ms)} ms, p99 ${integer(stage.p99Ms)} ms`;
  return [
    ...cpuLines(envoi.cpuMsPerEvent),
    `bare sender CPU per delivery: ${bare.map((round) => fixed(round.senderCpuMsPerDelivery, 3)).join(' / ')} ms`,
    `PostgreSQL transactions per event (every session): ${fixed(envoi.databaseTransactionsPerEvent, 2)}`,
    `attempts per delivery: ${fixed(envoi.attemptsPerDelivery, 2)}`,
    ...envoi.stages.map((stage) => stageLine('full speed, ', stage)),
    ...latency.stages.map((stage) => stageLine('half rate, ', stage)),
  ];
}

function printReport(
  envoi: EnvoiFigures,
  single: EnvoiFigures,
  bare: BareRound[],
  latency: LatencyFigures,
): void {
  console.log(
    `\nWebhooks: ${integer(SETTINGS.events)} message.delivered events per run (to Envoi in message.outcome_batch stream messages of ${envoi.eventsPerStreamMessage}, at half the peak of ${latency.eventsPerStreamMessage}), each to 2 of ${SETTINGS.scopedDomains + 1} endpoints (1 global + 1 scoped of ${SETTINGS.scopedDomains}), HTTPS keep-alive to a loopback receiver; rates from the first to the last arrival`,
  );
  for (const round of bare) {
    console.log(
      `  bare signed POST loop (round ${round.round})  ${integer(round.eventsPerSecond).padStart(7)} events/s  ${integer(round.deliveriesPerSecond).padStart(7)} deliveries/s`,
    );
  }
  for (const [label, run] of [
    [`${envoi.eventsPerStreamMessage} events per stream message`, envoi],
    ['1 event per stream message', single],
  ] as const) {
    console.log(
      `  Envoi, ${label}: EVENTS → fan-out → worker  ${integer(run.eventsPerSecond).padStart(7)} events/s  ${integer(run.deliveriesPerSecond).padStart(7)} deliveries/s  (first publish → last arrival: ${integer(run.endToEndEventsPerSecond)} events/s; published in ${fixed(run.publishSeconds, 2)} s)`,
    );
  }
  console.log(
    `\nLatency at half of the peak (${integer(latency.ratePerSecond)} events/s, open loop, ${integer(latency.expected)} deliveries): published → at the receiver p50 ${integer(latency.p50Ms)} ms, p99 ${integer(latency.p99Ms)} ms, max ${integer(latency.maxMs)} ms`,
  );
  console.log('\nWhere the time goes (full-speed run unless said)');
  for (const line of breakdown(envoi, bare, latency)) console.log(`  ${line}`);
}

function webhookTargets(
  envoi: EnvoiFigures,
  bare: BareRound[],
  latency: LatencyFigures,
): TargetResult[] {
  const bareRate = bare.reduce((sum, round) => sum + round.eventsPerSecond, 0) / bare.length;
  const lines = breakdown(envoi, bare, latency);
  return [
    atLeast({
      target: 'events/s fanned out and received (÷ the bare signed POST loop)',
      value: envoi.eventsPerSecond / bareRate,
      threshold: TARGETS.ratioToBare,
      format: (value) => `${fixed(value, 2)} ×`,
      breakdown: lines,
    }),
    below({
      target: `p99 latency, event on the stream → receiver, at half of the peak (${integer(latency.ratePerSecond)} events/s)`,
      value: latency.p99Ms,
      threshold: TARGETS.halfRateP99Ms,
      format: (value) => `${integer(value)} ms`,
      breakdown: lines,
    }),
  ];
}

runBenchmark('webhooks-throughput', async ({ root, dataDir, stoppers, signal, log }) => {
  const runId = randomUUID().slice(0, 8);
  // The receiver uses the platform's certificate; the services trust it as an extra CA.
  const certificate = await ensureDevCertificate(path.join(dataDir, 'tls'));
  const tls = readCertificate(certificate);
  const receiver = await BenchWebhookReceiver.start(tls);
  stoppers.add('webhook receiver', () => receiver.close());
  const platform = await startBenchPlatform(root, dataDir, log, {
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
  });
  stoppers.add('platform', () => platform.stop());
  const gateway = { baseUrl: platform.baseUrl, ca: tls.cert };
  const account = await createBenchAccount(platform);
  const domains = await createDomains(gateway, account, runId);
  const endpoints = await createEndpoints(gateway, account, receiver, domains);
  const context: Context = {
    account,
    domains,
    endpoints,
    receipts: receiver.receipts,
    signal,
    log,
  };
  const nats = await connectNats({ servers: platform.natsUrl.split(','), name: 'envoi-bench' });
  stoppers.add('nats connection', () => nats.drain());
  const database = await WebhooksDatabase.connect(platform.databaseUrl);
  stoppers.add('database client', () => database.close());
  const cpu = new ProcessCpu(BENCH_LABEL);
  for (const service of platform.services) cpu.label(service.child.pid, service.name);

  const bare: BareWebhooks = await BareProcess.start(
    'bare-webhooks',
    { run: BARE_WEBHOOKS_RUN, result: BARE_WEBHOOKS_RESULT },
    { root, dataDir },
    stoppers,
  );
  cpu.label(bare.pid, 'bare-webhooks');
  const concurrency = Math.min(
    SETTINGS.replicaConcurrency,
    endpoints.length * SETTINGS.endpointConcurrency,
  );
  log(`${endpoints.length} endpoints, ${concurrency} calls in flight at most (both blocks)`);
  const bareRounds = [await runBare(context, bare, concurrency, tls.cert, 1)];
  await warmUpEnvoi(context, nats);
  const single = await runEnvoi(context, nats, database, cpu, 1);
  log(`Envoi, 1 event per stream message: ${integer(single.eventsPerSecond)} events/s`);
  const envoi = await runEnvoi(context, nats, database, cpu, OUTCOME_EVENTS_PER_STREAM_MESSAGE);
  log(
    `Envoi: ${integer(envoi.eventsPerSecond)} events/s = ${integer(envoi.deliveriesPerSecond)} deliveries/s`,
  );
  bareRounds.push(await runBare(context, bare, concurrency, tls.cert, 2));
  const latency = await runHalfRate(context, nats, database, envoi.eventsPerSecond);

  printReport(envoi, single, bareRounds, latency);
  const targets = webhookTargets(envoi, bareRounds, latency);
  for (const line of targetLines(targets, 15)) console.log(line);
  const problems = [
    ...(receiver.receipts.duplicates > 0
      ? [`${receiver.receipts.duplicates} deliveries arrived more than once`]
      : []),
    ...(receiver.unexpected > 0 ? [`${receiver.unexpected} unexpected calls at the receiver`] : []),
    ...(latency.missing > 0 ? [`${latency.missing} deliveries of the latency run missing`] : []),
  ];
  return {
    report: {
      settings: { ...SETTINGS, concurrency, endpoints: endpoints.length },
      bare: bareRounds,
      envoi,
      envoiOneEventPerStreamMessage: single,
      latency,
      duplicates: receiver.receipts.duplicates,
      targets,
      problems,
    },
    problems,
  };
});
