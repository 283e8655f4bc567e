import 'reflect-metadata';

import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import {
  findFreePort,
  type ManagedProcess,
  type RunningPlatform,
  startProcess,
  waitForSignal,
} from '@envoi/shared-infra';
import { READY_SIGNAL } from '@envoi/shared-observability';

import {
  BARE_RESULT,
  BARE_RUN,
  type BareRunRequest,
  type BareRunResult,
} from './bare-sender.constants';
import { createVerifiedDomain, DnsTestServer } from './bench-domain';
import {
  type BenchAccount,
  createBenchAccount,
  platformGateway,
  startBenchPlatform,
  type Stoppers,
} from './bench-platform';
import { runBenchmark } from './bench-run';
import { DeliveryDatabase, type DeliveryState, type MessageTimeline } from './delivery-database';
import {
  type Arrival,
  type ReceiptCollector,
  ReceiptRouter,
  SmtpSink,
  waitForArrivals,
} from './delivery-sink';
import { sendTrusted } from './load';
import { cpuBetween, OTHER_PROCESSES, ProcessCpu } from './process-cpu';

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
  envoiWarmupMessages: 100,
  bareWarmupMessages: 200,
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
} as const;

const SENDER_LOCAL_PART = 'orders';

/** The bare block's variants. */
const BARE_CASES = [
  { key: 'dkim', name: 'bare nodemailer pool 5, STARTTLS + DKIM', starttls: true, dkim: true },
  { key: 'nodkim', name: 'bare nodemailer pool 5, STARTTLS', starttls: true, dkim: false },
  { key: 'plain', name: 'bare nodemailer pool 5, plain text', starttls: false, dkim: false },
] as const;
type BareCaseKey = (typeof BARE_CASES)[number]['key'];

const PARAGRAPHS = [
  'Thank you for your order. We have received it and our team is preparing it for dispatch; you will receive another message with the tracking number as soon as the parcel leaves our warehouse.',
  'If anything is missing or arrives damaged, reply to this message within 30 days and we will send a replacement or refund the item, whichever you prefer.',
  'You can follow every order and download invoices from your account page. Questions? Our support team answers within one working day.',
];

/** A transactional message of ~2 KB once Envoi has built it (text and HTML parts, headers). */
function sendBody(sender: string, recipients: readonly string[]): string {
  return JSON.stringify({
    from: { email: sender, name: 'Envoi Shop' },
    recipients: recipients.map((email) => ({ email })),
    subject: 'Your order A-10042 is confirmed',
    text_content: ['Hello Alex,', ...PARAGRAPHS, 'The Envoi Shop team'].join('\n\n'),
    html_content: [
      '<html><body>',
      '<p>Hello Alex,</p>',
      ...PARAGRAPHS.map((paragraph) => `<p>${paragraph}</p>`),
      '<p>The Envoi Shop team</p></body></html>',
    ].join('\n'),
  });
}

const integer = (value: number) =>
  Number.isFinite(value) ? Math.round(value).toLocaleString('en-US').replace(/,/g, ' ') : '–';
const fixed = (value: number, digits: number) =>
  Number.isFinite(value) ? value.toFixed(digits) : '–';

/** Nearest-rank percentile of unsorted values (NaN when empty). */
function percentile(values: readonly number[], quantile: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(quantile * sorted.length) - 1)] ?? NaN;
}

/** Messages per second between the first and the last arrival (N − 1 intervals). */
function arrivalRate(arrivals: readonly Arrival[]): { perSecond: number; spanMs: number } {
  const times = arrivals.map((arrival) => arrival.receivedAt);
  const spanMs = Math.max(...times) - Math.min(...times);
  return { perSecond: spanMs > 0 ? ((arrivals.length - 1) * 1000) / spanMs : NaN, spanMs };
}

// ---------------------------------------------------------------------------------------------
// The bare sender process

class BareSender {
  private nextId = 1;

  private constructor(private readonly handle: ManagedProcess) {}

  static async start(root: string, dataDir: string, stoppers: Stoppers): Promise<BareSender> {
    const handle = startProcess(
      'bare-sender',
      process.execPath,
      [path.join(root, 'dist', 'tools', 'bench', 'bare-sender.js')],
      {
        env: { PATH: process.env['PATH'] },
        log: { kind: 'file', path: path.join(dataDir, 'logs', 'bare-sender.log') },
      },
    );
    stoppers.add('bare sender', () => handle.stop());
    await waitForSignal(handle, READY_SIGNAL, 30_000);
    return new BareSender(handle);
  }

  get pid(): number | undefined {
    return this.handle.child.pid;
  }

  /** One run in the sender process; rejects after `timeoutMs`, on abort, or if it exits. */
  run(
    request: Omit<BareRunRequest, 'type' | 'id'>,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<BareRunResult> {
    const id = this.nextId++;
    const child = this.handle.child;
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        signal.removeEventListener('abort', onAbort);
      };
      const onMessage = (message: unknown) => {
        const result = message as Partial<BareRunResult> | null;
        if (result?.type !== BARE_RESULT || result.id !== id) return;
        cleanup();
        resolve(result as BareRunResult);
      };
      const onExit = (code: number | null) => {
        cleanup();
        reject(new Error(`the bare sender exited (code ${code}) during a run`));
      };
      const onAbort = () => {
        cleanup();
        reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`the bare sender did not finish a run within ${timeoutMs} ms`));
      }, timeoutMs);
      child.on('message', onMessage);
      child.once('exit', onExit);
      signal.addEventListener('abort', onAbort, { once: true });
      child.send({ ...request, type: BARE_RUN, id } satisfies BareRunRequest);
    });
  }
}

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

interface Accepted {
  /** `<uuid@domain>` as the API answered, and the bare uuid. */
  id: string;
  uuid: string;
  /** When the 202 carrying it arrived (epoch ms). */
  acceptedAt: number;
}

interface SendPhase {
  byRecipient: Map<string, Accepted>;
  startedAt: number;
  lastAcceptedAt: number;
}

const MESSAGE_ID = /^<([0-9a-f-]{36})@[^>]+>$/;

/** Sends one message to each recipient through the API, `recipientsPerRequest` per request. */
async function sendThroughApi(
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
  sender: string,
  recipients: readonly string[],
  signal: AbortSignal,
): Promise<SendPhase> {
  const batches: string[][] = [];
  for (let index = 0; index < recipients.length; index += SETTINGS.recipientsPerRequest) {
    batches.push(recipients.slice(index, index + SETTINGS.recipientsPerRequest));
  }
  const byRecipient = new Map<string, Accepted>();
  const startedAt = Date.now();
  let lastAcceptedAt = startedAt;
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (!failed && next < batches.length) {
      signal.throwIfAborted();
      const batch = batches[next++] ?? [];
      const response = await sendTrusted(gateway, {
        method: 'POST',
        path: `/v2/accounts/${account.accountId}/messages`,
        headers: {
          authorization: `Bearer ${account.apiKey}`,
          'content-type': 'application/json',
        },
        body: sendBody(sender, batch),
      });
      const at = Date.now();
      if (response.status !== 202) {
        throw new Error(`send: ${response.status} ${response.body.slice(0, 300)}`);
      }
      const data = (
        JSON.parse(response.body) as {
          data: Array<{ id: string | null; status: string; recipient: { email: string } }>;
        }
      ).data;
      for (const entry of data) {
        const uuid = entry.id === null ? undefined : MESSAGE_ID.exec(entry.id)?.[1];
        if (entry.status !== 'queued' || entry.id === null || uuid === undefined) {
          throw new Error(`send: an entry was not queued: ${JSON.stringify(entry)}`);
        }
        byRecipient.set(entry.recipient.email, { id: entry.id, uuid, acceptedAt: at });
      }
      lastAcceptedAt = Math.max(lastAcceptedAt, at);
    }
  };
  await Promise.all(
    Array.from({ length: SETTINGS.requestsInFlight }, () =>
      worker().catch((error: unknown) => {
        failed = true;
        throw error;
      }),
    ),
  );
  if (byRecipient.size !== recipients.length) {
    throw new Error(`send: ${byRecipient.size} messages accepted for ${recipients.length}`);
  }
  return { byRecipient, startedAt, lastAcceptedAt };
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

/** CPU ms per label divided by `divisor`, biggest first, without labels below 1 % of the total. */
function perUnit(
  spent: Record<string, number> | null,
  divisor: number,
): Record<string, number> | null {
  if (!spent) return null;
  const ours = Object.entries(spent).filter(([label]) => label !== OTHER_PROCESSES);
  const total = ours.reduce((sum, [, ms]) => sum + ms, 0);
  const divided: Record<string, number> = {};
  for (const [label, ms] of ours.sort((a, b) => b[1] - a[1])) {
    if (ms >= total * 0.01) divided[label] = Number((ms / divisor).toFixed(3));
  }
  const other = spent[OTHER_PROCESSES];
  if (other !== undefined) divided[OTHER_PROCESSES] = Number((other / divisor).toFixed(3));
  return divided;
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
  /**
   * CPU ms per message by process: live, from the first request until every status settled
   * (accepting included); backlog, from the restarted delivery's readiness until then.
   */
  cpuMsPerMessage: Record<string, number> | null;
  /** Share of one core each process used while delivering (live: after the last 202). */
  coreShareWhileDelivering: Record<string, number> | null;
}

interface EnvoiTarget {
  gateway: { baseUrl: string; ca: string };
  account: BenchAccount;
  sendingDomain: string;
  database: DeliveryDatabase;
  cpu: ProcessCpu;
  dns: DnsTestServer;
  delivery: DeliveryControl;
}

/**
 * The delivery service: the platform's process until stop(), then the ones start() runs with
 * the platform's environment and arguments (optionally with `--cpu-prof`).
 */
class DeliveryControl {
  private current: ManagedProcess;
  private restarts = 0;

  constructor(
    platform: RunningPlatform,
    private readonly env: NodeJS.ProcessEnv,
    private readonly root: string,
    private readonly dataDir: string,
    private readonly stoppers: Stoppers,
    private readonly cpu: ProcessCpu,
    private readonly profileDir: string | null,
  ) {
    const service = platform.services.find((candidate) => candidate.name === 'delivery');
    if (!service) throw new Error('the platform runs no delivery service');
    this.current = service;
  }

  /** Stops the running delivery process (SIGTERM, SIGKILL after 10 s); says how it ended. */
  async stop(): Promise<string> {
    const { child } = this.current;
    const started = performance.now();
    await this.current.stop();
    const how = child.signalCode === null ? `exit code ${child.exitCode}` : child.signalCode;
    return `stopped in ${integer(performance.now() - started)} ms (${how})`;
  }

  async start(): Promise<void> {
    this.restarts++;
    const name = `delivery-${this.restarts + 1}`;
    if (this.profileDir) mkdirSync(this.profileDir, { recursive: true });
    const handle = startProcess(
      name,
      process.execPath,
      [
        '--enable-source-maps',
        // A V8 tick log, written as it runs (a --cpu-prof profile needs a clean exit).
        ...(this.profileDir
          ? [
              '--prof',
              '--no-logfile-per-isolate',
              `--logfile=${path.join(this.profileDir, `${name}.v8.log`)}`,
            ]
          : []),
        path.join(this.root, 'dist', 'apps', 'delivery', 'src', 'main.js'),
      ],
      {
        env: this.env,
        log: { kind: 'file', path: path.join(this.dataDir, 'logs', `${name}.log`) },
      },
    );
    this.stoppers.add(name, () => handle.stop());
    this.current = handle;
    this.cpu.label(handle.child.pid, 'delivery');
    await waitForSignal(handle, READY_SIGNAL, 60_000);
  }
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
  const beforeSend = cpu.snapshot();
  const sent = await sendThroughApi(
    target.gateway,
    target.account,
    `${SENDER_LOCAL_PART}@${target.sendingDomain}`,
    recipients,
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
  const arrivals = [...firstByRecipient.values()];
  const rate = arrivalRate(arrivals);
  const lastArrival = Math.max(...arrivals.map((arrival) => arrival.receivedAt));
  const afterAccept = arrivals.filter((arrival) => arrival.receivedAt > sent.lastAcceptedAt);
  let stages: StageFigures[] | null = null;
  try {
    stages = stageFigures(await database.timelines(uuids), receipts);
  } catch (error) {
    context.log(`stage timings unavailable: ${String(error)}`);
  }
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
      cpuMsPerMessage: perUnit(cpuBetween(costStart, settledSnapshot), SETTINGS.messages),
      coreShareWhileDelivering:
        windowMs >= 500 ? perUnit(cpuBetween(windowStart, delivered), windowMs) : null,
    },
    problems: problems.map((problem) => `Envoi ${mode}: ${problem}`),
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
  if (envoi.stages) {
    console.log(
      `  ${'stage (ms)'.padEnd(58)} ${'p50'.padStart(6)} ${'p90'.padStart(6)} ${'max'.padStart(6)}`,
    );
    for (const stage of envoi.stages) {
      console.log(
        `    ${stage.stage.padEnd(56)} ${integer(stage.p50Ms).padStart(6)} ${integer(stage.p90Ms).padStart(6)} ${integer(stage.maxMs).padStart(6)}`,
      );
    }
  }
  const cpuLine = (entries: Record<string, number> | null, format: (value: number) => string) =>
    entries === null
      ? '(no /proc)'
      : Object.entries(entries)
          .map(([label, value]) => `${label} ${format(value)}`)
          .join(', ');
  console.log(
    `  CPU ms per message (${envoi.mode === 'live' ? 'accepting included' : 'delivery only'}): ${cpuLine(envoi.cpuMsPerMessage, (value) => value.toFixed(2))}`,
  );
  console.log(
    `  share of one core while delivering: ${cpuLine(envoi.coreShareWhileDelivering, (value) => `${Math.round(value * 100)} %`)}`,
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

// ---------------------------------------------------------------------------------------------

runBenchmark('delivery-throughput', async ({ root, dataDir, stoppers, signal, log, keepData }) => {
  // BENCH_PROFILE_DELIVERY=1: the restarted delivery process writes a V8 tick log
  // (`node --prof-process <dataDir>/profiles/delivery-2.v8.log`), kept with the data.
  const profileDir =
    process.env['BENCH_PROFILE_DELIVERY'] === undefined ? null : path.join(dataDir, 'profiles');
  if (profileDir !== null) keepData();
  const runId = randomUUID().slice(0, 8);
  const recipientDomain = `inbox-${runId}.example.net`;
  const mxHost = `mx.${recipientDomain}`;

  const sinkPort = await findFreePort();
  const sink = await SmtpSink.start('127.0.0.1', sinkPort);
  stoppers.add('smtp sink', () => sink.stop());
  const router = new ReceiptRouter(sink);
  const dns = await DnsTestServer.start();
  stoppers.add('dns server', () => dns.stop());
  dns.set(recipientDomain, [{ type: 'MX', exchange: mxHost, priority: 10 }]);
  dns.set(mxHost, [{ type: 'A', address: '127.0.0.1' }]);

  log(
    `starting a throwaway platform in ${dataDir} (DNS on ${dns.address}, MX of ${recipientDomain}: the sink on 127.0.0.1:${sinkPort})`,
  );
  const platform = await startBenchPlatform(root, dataDir, log, {
    DNS_SERVERS: dns.address,
    DNS_TIMEOUT_MS: '1000',
    SMTP_OUTBOUND_PORT: String(sinkPort),
    RETRY_SCHEDULE_MS: SETTINGS.retryScheduleMs,
  });
  stoppers.add('platform', () => platform.stop());
  signal.throwIfAborted();
  const bareSender = await BareSender.start(root, dataDir, stoppers);
  const database = await DeliveryDatabase.connect(platform.databaseUrl);
  stoppers.add('database client', () => database.close());

  const ca = readFileSync(platform.certificate.certPath, 'utf8');
  const gateway = { baseUrl: platformGateway(platform, dataDir).baseUrl, ca };
  const account = await createBenchAccount(platform);
  const sendingDomain = `s${runId}.example.test`;
  await createVerifiedDomain(gateway, account, dns, sendingDomain, signal);
  log(`account ${account.accountId}, sending domain ${sendingDomain} verified`);

  const cpu = new ProcessCpu('bench (sink, DNS, API client)');
  for (const service of platform.services) cpu.label(service.child.pid, service.name);
  cpu.label(bareSender.pid, 'bare sender');
  const context: Context = { runId, signal, log, sinkPort, router, recipientDomain };
  const target: EnvoiTarget = {
    gateway,
    account,
    sendingDomain,
    database,
    cpu,
    dns,
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

  return {
    report: {
      settings: SETTINGS,
      envoiToBareWithDkim: ratios,
      envoi,
      bare,
      problems,
    },
    problems,
  };
});
