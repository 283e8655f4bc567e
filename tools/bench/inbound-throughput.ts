import 'reflect-metadata';

import { randomUUID } from 'node:crypto';
import path from 'node:path';

import type { CreatedRouteRecord } from '@envoi/contracts-routes';
import { ensureDevCertificate, findFreePort, readCertificate } from '@envoi/shared-infra';

import { fixed, integer } from './bench-format';
import {
  type BenchAccount,
  createBenchAccount,
  startBenchPlatform,
  startReadyWorker,
} from './bench-platform';
import { runBenchmark } from './bench-run';
import {
  type Block,
  type BlockRun,
  interleavedRounds,
  mean,
  printRatioTarget,
  ratioOf,
} from './block-rounds';
import { InboundDatabase, type InboundStages } from './inbound-database';
import { sendTrusted } from './load';
import { cpuBetween, ProcessCpu } from './process-cpu';
import { alternativeMessage, type PoolRun, type SmtpMessage, SmtpPool } from './smtp-pool';
import type { DeliveryLatencies, ExpectedDelivery } from './webhook-receipts';
import {
  arrivalsPerSecond,
  arrivalTimes,
  deliveryLatencies,
  waitForArrivals,
} from './webhook-receipts';
import { BenchWebhookReceiver } from './webhook-receiver-https';

/**
 * `npm run bench:inbound` (issue 17): inbound messages per second from SMTP (pooled nodemailer
 * connections, STARTTLS, no AUTH) through the MX (spooled, routed event) and the routes service
 * (copied, planned, claimed, signed POST) to the route URL, a loopback HTTPS receiver; next to a
 * bare smtp-server sink (bare-inbound-sink.ts) that parses each message with mailparser, signs a
 * JSON body and POSTs it to the same receiver before its 250, in the same run with the same
 * client pool. A message counts when it arrives at the receiver (keyed by its unique subject);
 * a run's rate is its messages over first submission → last arrival. Runs are interleaved
 * rounds, each bounded in time; the CPU of each process says where the time goes.
 */

const SETTINGS = {
  /** Pooled client connections, for both blocks (the MX allows 20 per address). */
  connections: 10,
  /** Enough for both blocks to reach their steady rate (the bare sink needs ~1 000 to JIT-compile its parser). */
  warmupMessages: 1000,
  messagesPerRun: 1500,
  rounds: 3,
  /** A run gives up after this long, or when nothing arrived for `stallMs`. */
  runTimeoutMs: 120_000,
  stallMs: 30_000,
  pollMs: 20,
} as const;

/** Issue 17's target. */
const TARGETS = { ratioToBare: 0.4 } as const;

const BENCH_LABEL = 'bench (nodemailer, receiver)';
const BARE_LABEL = 'bare-inbound-sink';
const BARE_SECRET = 'envoi-whsec-bare-inbound-sink-of-the-benchmark';
/** The processes the breakdown names first: the MX, the routes service and the stores. */
const BREAKDOWN_LABELS = ['smtp', 'routes', 'nats-server', 'postgres'] as const;

/** `messagesPerSecond`: messages at the receiver ÷ (first submission → last arrival). */
interface RunFigures extends PoolRun, BlockRun {
  /** Receiver side only: first to last arrival. */
  arrivalsPerSecond: number;
  /** One SMTP transaction (MAIL, RCPT, DATA → 250) on a pooled connection, mean. */
  transactionMs: number;
  /** 250 at the client → arrival at the receiver. */
  acceptedToArrival: DeliveryLatencies;
  /** CPU ms per message by process label (null without /proc). */
  cpuMsPerMessage: Record<string, number> | null;
  /** PostgreSQL transactions per message, every session's (the bare sink has none). */
  transactionsPerMessage: number;
}

function subjectOf(runId: string, index: number): string {
  return `Inbound benchmark ${runId} ${index}`;
}

/** The receiver's key of a POST: the subject in its `data` (both blocks' bodies carry it). */
function subjectInBody(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { data?: { subject?: unknown } };
    const subject = parsed.data?.subject;
    return typeof subject === 'string' ? subject : undefined;
  } catch {
    return undefined;
  }
}

/** A small plain + HTML reply, the same bytes for both blocks but its subject and recipient. */
function message(domain: string, runId: string, index: number): SmtpMessage {
  const text = `Thanks, this is my answer to ticket ${index}.`.repeat(10);
  return alternativeMessage({
    from: 'customer@sender.example.test',
    fromName: 'Customer',
    to: `ticket-${index}@${domain}`,
    headers: [
      `Subject: ${subjectOf(runId, index)}`,
      `Message-ID: <${runId}.${index}@sender.example.test>`,
    ],
    text,
    html: `<p>${text}</p>`,
  });
}

async function createRoute(
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
  domain: string,
  url: string,
): Promise<CreatedRouteRecord> {
  const headers = { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' };
  const base = `/v2/accounts/${account.accountId}`;
  const createdDomain = await sendTrusted(gateway, {
    method: 'POST',
    path: `${base}/domains`,
    headers,
    body: JSON.stringify({ domain }),
  });
  if (createdDomain.status !== 201) {
    throw new Error(`creating domain ${domain}: ${createdDomain.status} ${createdDomain.body}`);
  }
  const created = await sendTrusted(gateway, {
    method: 'POST',
    path: `${base}/routes`,
    headers,
    body: JSON.stringify({ name: 'bench', url, recipient: `*@${domain}` }),
  });
  if (created.status !== 201) {
    throw new Error(`creating the route: ${created.status} ${created.body.slice(0, 300)}`);
  }
  return JSON.parse(created.body) as CreatedRouteRecord;
}

interface Measure {
  pool: SmtpPool;
  receiver: BenchWebhookReceiver;
  /** The receiver's endpoint name of the block. */
  endpoint: string;
  cpu: ProcessCpu;
  database: InboundDatabase;
  signal: AbortSignal;
}

/** Submits `batch` and waits until each message arrived at the receiver. */
async function measureRun(
  measure: Measure,
  block: Block,
  round: number,
  batch: readonly SmtpMessage[],
  subjects: readonly string[],
): Promise<RunFigures> {
  const acceptedAt = new Map<string, number>();
  const subjectByRaw = new Map(batch.map((entry, index) => [entry.raw, subjects[index] ?? '']));
  const before = measure.cpu.snapshot();
  const transactionsBefore = await measure.database.transactions();
  const started = performance.now();
  const run = await measure.pool.run(batch, SETTINGS.runTimeoutMs, (sent, _response, at) =>
    acceptedAt.set(subjectByRaw.get(sent.raw) ?? '', at),
  );
  const expected: ExpectedDelivery[] = subjects.map((subject) => ({
    eventId: subject,
    endpoints: [measure.endpoint],
    publishedAt: acceptedAt.get(subject) ?? Number.NaN,
  }));
  await waitForArrivals(
    measure.receiver.receipts,
    expected,
    SETTINGS,
    measure.signal,
    `${block} round ${round}`,
  );
  const spent = cpuBetween(before, measure.cpu.snapshot());
  const transactions = (await measure.database.transactions()) - transactionsBefore;
  const arrivals = arrivalTimes(measure.receiver.receipts, expected);
  const count = arrivals.length;
  return {
    ...run,
    block,
    round,
    messagesPerSecond: (count * 1000) / (Math.max(...arrivals) - started),
    arrivalsPerSecond: arrivalsPerSecond(arrivals),
    transactionMs: (SETTINGS.connections * run.seconds * 1000) / Math.max(1, run.accepted),
    acceptedToArrival: deliveryLatencies(measure.receiver.receipts, expected),
    transactionsPerMessage: transactions / count,
    cpuMsPerMessage:
      spent === null
        ? null
        : Object.fromEntries(Object.entries(spent).map(([label, ms]) => [label, ms / count])),
  };
}

/** CPU ms per message of a label, every `postgres (…)` process counted under `postgres`. */
function cpuOf(run: RunFigures, label: string): number {
  return Object.entries(run.cpuMsPerMessage ?? {})
    .filter(([name]) => name === label || name.startsWith(`${label} (`))
    .reduce((sum, [, ms]) => sum + ms, 0);
}

function breakdown(
  envoi: readonly RunFigures[],
  bare: readonly RunFigures[],
  stages: InboundStages,
): string[] {
  const others = new Map<string, number>();
  for (const run of envoi) {
    for (const [label, ms] of Object.entries(run.cpuMsPerMessage ?? {})) {
      if (BREAKDOWN_LABELS.some((name) => label === name || label.startsWith(`${name} (`)))
        continue;
      others.set(label, (others.get(label) ?? 0) + ms / envoi.length);
    }
  }
  const p = (runs: readonly RunFigures[], pick: (latency: DeliveryLatencies) => number) =>
    mean(runs.map((run) => pick(run.acceptedToArrival)));
  return [
    ...BREAKDOWN_LABELS.map(
      (label) =>
        `CPU per message, ${label}: ${fixed(mean(envoi.map((run) => cpuOf(run, label))), 3)} ms`,
    ),
    ...[...others.entries()]
      .sort(([, a], [, b]) => b - a)
      .filter(([, ms]) => ms >= 0.005)
      .map(([label, ms]) => `CPU per message, ${label}: ${fixed(ms, 3)} ms`),
    `bare sink CPU per message: ${fixed(mean(bare.map((run) => cpuOf(run, BARE_LABEL))), 3)} ms`,
    `MX 250 (MAIL, RCPT, DATA → spooled, 250) on a pooled connection: ${fixed(mean(envoi.map((run) => run.transactionMs)), 1)} ms mean; the bare sink's (parse, sign, POST → 250): ${fixed(mean(bare.map((run) => run.transactionMs)), 1)} ms`,
    `spool → POST (250 at the client → arrival at the route URL): p50 ${fixed(
      p(envoi, (latency) => latency.p50Ms),
      0,
    )} ms, p99 ${fixed(
      p(envoi, (latency) => latency.p99Ms),
      0,
    )} ms`,
    `MX receipt → calls stored by the routes service (spool, events, intake batch, parse, and a first call made straight from the stream): p50 ${fixed(stages.receivedToPlanned.p50Ms, 0)} ms, p99 ${fixed(stages.receivedToPlanned.p99Ms, 0)} ms; stored → outcome recorded (0 for a call stored with its result; else a place among the route's ROUTE_ENDPOINT_CONCURRENCY (${SETTINGS.connections}), claim, POST): p50 ${fixed(stages.plannedToRecorded.p50Ms, 0)} ms, p99 ${fixed(stages.plannedToRecorded.p99Ms, 0)} ms (${stages.calls} calls, ${stages.storedWithResult} made straight from the stream and stored with their result)`,
    `PostgreSQL transactions per message: ${fixed(mean(envoi.map((run) => run.transactionsPerMessage)), 2)}`,
    `the MX accepted ${integer(mean(envoi.map((run) => run.accepted / run.seconds)))} messages/s; ${integer(mean(envoi.map((run) => run.arrivalsPerSecond)))} calls/s arrived at the route URL`,
  ];
}

function runLine(run: RunFigures): string {
  const name =
    run.block === 'bare' ? 'bare sink (parse, sign, POST)' : 'Envoi MX → routes → route URL';
  // The bare sink POSTs before its 250: only Envoi's POSTs follow the reply.
  const latency =
    run.block === 'envoi' ? `, 250 → POST p50 ${fixed(run.acceptedToArrival.p50Ms, 0)} ms` : '';
  return `  ${name.padEnd(32)} round ${run.round}  ${integer(run.messagesPerSecond).padStart(5)} messages/s  (${run.accepted}/${run.messages} accepted in ${fixed(run.seconds, 2)} s${latency}${run.failures > 0 ? `, ${run.failures} failed: ${run.firstFailure ?? ''}` : ''})`;
}

runBenchmark('inbound-throughput', async ({ root, dataDir, stoppers, signal, log }) => {
  const runId = randomUUID().slice(0, 8);
  // The receiver uses the platform's certificate; the services trust it as an extra CA.
  const certificate = await ensureDevCertificate(path.join(dataDir, 'tls'));
  const tls = readCertificate(certificate);
  const receiver = await BenchWebhookReceiver.start(tls, subjectInBody);
  stoppers.add('route receiver', () => receiver.close());
  const platform = await startBenchPlatform(root, dataDir, log, {
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
    // The bare sink POSTs on each of its client connections at once: the route may do as many.
    ROUTE_ENDPOINT_CONCURRENCY: String(SETTINGS.connections),
  });
  stoppers.add('platform', () => platform.stop());
  const database = await InboundDatabase.connect(platform.databaseUrl);
  stoppers.add('database client', () => database.close());
  const account = await createBenchAccount(platform);
  const domain = `in-${runId}.bench.example`;
  const route = await createRoute(
    { baseUrl: platform.baseUrl, ca: tls.cert },
    account,
    domain,
    receiver.url('envoi'),
  );
  log(`account ${account.accountId}, route ${route.id} for *@${domain} → ${route.url}`);

  const barePort = await findFreePort();
  const bareSink = await startReadyWorker(
    BARE_LABEL,
    path.join(root, 'dist', 'tools', 'bench', 'bare-inbound-sink.js'),
    {
      PATH: process.env['PATH'],
      TLS_CERT_FILE: certificate.certPath,
      TLS_KEY_FILE: certificate.keyPath,
      BENCH_PORT: String(barePort),
      BENCH_ROUTE_URL: receiver.url('bare'),
      BENCH_ROUTE_SECRET: BARE_SECRET,
    },
    dataDir,
    stoppers,
  );
  const cpu = new ProcessCpu(BENCH_LABEL);
  for (const service of platform.services) cpu.label(service.child.pid, service.name);
  cpu.label(bareSink.pid, BARE_LABEL);

  const pools: Record<Block, SmtpPool> = {
    envoi: new SmtpPool(
      { name: 'envoi', port: platform.smtpMx.port, ca: tls.cert },
      SETTINGS.connections,
    ),
    bare: new SmtpPool({ name: 'bare', port: barePort, ca: tls.cert }, SETTINGS.connections),
  };
  stoppers.add('smtp client pools', () => {
    pools.envoi.close();
    pools.bare.close();
    return Promise.resolve();
  });
  let sent = 0;
  const measureOf = (block: Block): Measure => ({
    pool: pools[block],
    receiver,
    endpoint: block,
    cpu,
    database,
    signal,
  });
  const runBlock = (block: Block, round: number, count: number) => {
    const indexes = Array.from({ length: count }, (_, offset) => sent + offset);
    sent += count;
    return measureRun(
      measureOf(block),
      block,
      round,
      indexes.map((index) => message(domain, runId, index)),
      indexes.map((index) => subjectOf(runId, index)),
    );
  };

  log(
    `warm-up: ${SETTINGS.warmupMessages} messages to each block over ${SETTINGS.connections} pooled connections`,
  );
  log(
    `both blocks POST to the receiver on up to ${SETTINGS.connections} connections at once (the bare sink one per client connection, Envoi's route ROUTE_ENDPOINT_CONCURRENCY=${SETTINGS.connections})`,
  );
  const problems: string[] = [];
  for (const block of ['bare', 'envoi'] as const) {
    const warmup = await runBlock(block, 0, SETTINGS.warmupMessages);
    if (warmup.failures > 0)
      problems.push(`${block} warm-up: ${warmup.failures} failed: ${warmup.firstFailure ?? ''}`);
  }
  const runs = await interleavedRounds(
    SETTINGS.rounds,
    (block, round) => runBlock(block, round, SETTINGS.messagesPerRun),
    { signal, log, problems },
    runLine,
  );

  const envoi = runs.filter((run) => run.block === 'envoi');
  const bare = runs.filter((run) => run.block === 'bare');
  const ratio = ratioOf(runs);
  const lines = breakdown(envoi, bare, await database.stagesOf(route.id));
  const results = [
    printRatioTarget({
      heading: `Inbound mail: ${SETTINGS.messagesPerRun} messages (${message(domain, runId, 0).raw.length} B, multipart text + HTML, one recipient) per run over ${SETTINGS.connections} pooled nodemailer connections (STARTTLS), until each arrived at the route URL; both blocks make up to ${SETTINGS.connections} concurrent POSTs`,
      runs,
      line: runLine,
      breakdown: lines,
      target: 'inbound messages/s from SMTP to the route URL (÷ the bare smtp-server sink)',
      threshold: TARGETS.ratioToBare,
      issue: 17,
    }),
  ];
  if (receiver.receipts.duplicates > 0)
    problems.push(`${receiver.receipts.duplicates} messages arrived more than once`);
  if (receiver.unexpected > 0) problems.push(`${receiver.unexpected} unexpected calls`);
  return {
    report: {
      settings: SETTINGS,
      runs,
      ratio,
      breakdown: lines,
      duplicates: receiver.receipts.duplicates,
      targets: results,
      problems,
    },
    problems,
  };
});
