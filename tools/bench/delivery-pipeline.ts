// What the delivery benchmarks share: the message they send, sending it through the API, and
// control of the delivery service (stopped, then restarted, so that a backlog builds).
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

import { createVerifiedDomain, DnsTestServer } from './bench-domain';
import {
  type BenchAccount,
  createBenchAccount,
  platformGateway,
  startBenchPlatform,
  type Stoppers,
} from './bench-platform';
import type { BenchRun } from './bench-run';
import { DeliveryDatabase } from './delivery-database';
import { type Arrival, ReceiptRouter, SmtpSink } from './delivery-sink';
import { sendTrusted } from './load';
import { OTHER_PROCESSES, type ProcessCpu } from './process-cpu';

export const SENDER_LOCAL_PART = 'orders';

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

/** Messages per second between the first and the last arrival (N − 1 intervals). */
export function arrivalRate(arrivals: readonly Arrival[]): { perSecond: number; spanMs: number } {
  const times = arrivals.map((arrival) => arrival.receivedAt);
  const spanMs = Math.max(...times) - Math.min(...times);
  return { perSecond: spanMs > 0 ? ((arrivals.length - 1) * 1000) / spanMs : NaN, spanMs };
}

export interface Accepted {
  /** `<uuid@domain>` as the API answered, and the bare uuid. */
  id: string;
  uuid: string;
  /** When the 202 carrying it arrived (epoch ms). */
  acceptedAt: number;
}

export interface SendPhase {
  byRecipient: Map<string, Accepted>;
  startedAt: number;
  lastAcceptedAt: number;
}

const MESSAGE_ID = /^<([0-9a-f-]{36})@[^>]+>$/;

/** The `queued` entries of a 202's body by recipient; throws if one was not queued. */
export function acceptedEntries(body: string, acceptedAt: number): Array<[string, Accepted]> {
  const data = (
    JSON.parse(body) as {
      data: Array<{ id: string | null; status: string; recipient: { email: string } }>;
    }
  ).data;
  return data.map((entry) => {
    const uuid = entry.id === null ? undefined : MESSAGE_ID.exec(entry.id)?.[1];
    if (entry.status !== 'queued' || entry.id === null || uuid === undefined) {
      throw new Error(`send: an entry was not queued: ${JSON.stringify(entry)}`);
    }
    return [entry.recipient.email, { id: entry.id, uuid, acceptedAt }];
  });
}

/** `POST /v2/accounts/{id}/messages` of one message to each recipient. */
export function sendRequest(account: BenchAccount, sender: string, recipients: readonly string[]) {
  return {
    method: 'POST' as const,
    path: `/v2/accounts/${account.accountId}/messages`,
    headers: {
      authorization: `Bearer ${account.apiKey}`,
      'content-type': 'application/json',
    },
    body: sendBody(sender, recipients),
  };
}

/**
 * Sends one message to each recipient through the API, `recipientsPerRequest` per request,
 * `requestsInFlight` at a time.
 */
export async function sendThroughApi(
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
  sender: string,
  recipients: readonly string[],
  pace: { recipientsPerRequest: number; requestsInFlight: number },
  signal: AbortSignal,
): Promise<SendPhase> {
  const batches: string[][] = [];
  for (let index = 0; index < recipients.length; index += pace.recipientsPerRequest) {
    batches.push(recipients.slice(index, index + pace.recipientsPerRequest));
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
      const response = await sendTrusted(gateway, sendRequest(account, sender, batch));
      const at = Date.now();
      if (response.status !== 202) {
        throw new Error(`send: ${response.status} ${response.body.slice(0, 300)}`);
      }
      for (const [recipient, entry] of acceptedEntries(response.body, at)) {
        byRecipient.set(recipient, entry);
      }
      lastAcceptedAt = Math.max(lastAcceptedAt, at);
    }
  };
  await Promise.all(
    Array.from({ length: pace.requestsInFlight }, () =>
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

/** CPU ms per label divided by `divisor`, biggest first, without labels below 1 % of the total. */
export function perUnit(
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

/**
 * Node flags for a profiled delivery process. BENCH_PROFILE_DELIVERY=cpu: a --cpu-prof profile
 * (written when the process exits after SIGTERM; every native call is charged to its JS caller);
 * otherwise a V8 tick log written as it runs (`node --prof-process`; native code in the node
 * binary shows as unaccounted).
 */
function profileFlags(profileDir: string, name: string): string[] {
  if (process.env['BENCH_PROFILE_DELIVERY'] === 'cpu') {
    return ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}.cpuprofile`];
  }
  return [
    '--prof',
    '--no-logfile-per-isolate',
    `--logfile=${path.join(profileDir, `${name}.v8.log`)}`,
  ];
}
/**
 * The delivery service: the platform's process until stop(), then the ones start() runs with
 * the platform's environment and arguments (optionally with `--cpu-prof`).
 */
export class DeliveryControl {
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
    return `stopped in ${Math.round(performance.now() - started)} ms (${how})`;
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
        ...(this.profileDir ? profileFlags(this.profileDir, name) : []),
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

/** A platform whose MX for `recipientDomain` is the sink, with a verified sending domain. */
export interface DeliveryStack {
  platform: RunningPlatform;
  sinkPort: number;
  router: ReceiptRouter;
  dns: DnsTestServer;
  recipientDomain: string;
  database: DeliveryDatabase;
  gateway: { baseUrl: string; ca: string };
  account: BenchAccount;
  sendingDomain: string;
}

/**
 * Starts the SMTP sink, a DNS server that publishes the MX of `recipientDomain` (the sink) and
 * the sending domain's records, and the platform that uses both; creates an account and verifies
 * its sending domain.
 */
export async function startDeliveryStack(
  run: Pick<BenchRun, 'root' | 'dataDir' | 'stoppers' | 'signal' | 'log'>,
  runId: string,
  serviceEnv: NodeJS.ProcessEnv,
): Promise<DeliveryStack> {
  const { root, dataDir, stoppers, signal, log } = run;
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
    ...serviceEnv,
  });
  stoppers.add('platform', () => platform.stop());
  signal.throwIfAborted();
  const database = await DeliveryDatabase.connect(platform.databaseUrl);
  stoppers.add('database client', () => database.close());

  const ca = readFileSync(platform.certificate.certPath, 'utf8');
  const gateway = { baseUrl: platformGateway(platform, dataDir).baseUrl, ca };
  const account = await createBenchAccount(platform);
  const sendingDomain = `s${runId}.example.test`;
  await createVerifiedDomain(gateway, account, dns, sendingDomain, signal);
  log(`account ${account.accountId}, sending domain ${sendingDomain} verified`);
  return {
    platform,
    sinkPort,
    router,
    dns,
    recipientDomain,
    database,
    gateway,
    account,
    sendingDomain,
  };
}
