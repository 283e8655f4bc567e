import 'reflect-metadata';

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

import type { CreatedSmtpCredentialRecord } from '@envoi/contracts-accounts';
import { type AcceptSubmissionRequest, MessagesSubjects } from '@envoi/contracts-messages';
import { findFreePort } from '@envoi/shared-infra';
import { connectNats, RpcClient } from '@envoi/shared-nats';

import { BARE_SMTP_PASSWORD, BARE_SMTP_USERNAME } from './bare-smtp-sink.constants';
import { createVerifiedDomain, startPlatformWithDns } from './bench-domain';
import { fixed, integer } from './bench-format';
import { type BenchAccount, createBenchAccount, startReadyWorker } from './bench-platform';
import { runBenchmark } from './bench-run';
import { type BlockRun, interleavedRounds, mean, printRatioTarget, ratioOf } from './block-rounds';
import { sendTrusted } from './load';
import { cpuBetween, type CpuSnapshot, OTHER_PROCESSES, ProcessCpu } from './process-cpu';
import {
  alternativeMessage,
  type PoolRun,
  type SmtpMessage,
  SmtpPool,
  type SmtpTarget,
} from './smtp-pool';

/**
 * `npm run bench:smtp` (issue 16): messages per second submitted over SMTP (STARTTLS + AUTH
 * PLAIN, pooled nodemailer connections) until each is committed (250), next to a bare
 * smtp-server sink (bare-smtp-sink.ts: same TLS, same AUTH, same message; it only parses) in the
 * same run with the same client pool. Runs are a fixed number of messages, in interleaved rounds,
 * each bounded in time; the CPU of each process (process-cpu.ts) says where the time goes, and a
 * run of acceptSubmission requests straight over NATS says how much of a transaction is the
 * messages service's accept path. The delivery service is stopped: only submitting is measured.
 */

const SETTINGS = {
  /** Pooled client connections, for both blocks (the smtp app allows 20 per address). */
  connections: 10,
  /**
   * Per block: enough for both servers' code to be optimised (after 100, and after 600, the bare
   * sink's rate still rose from round to round, up to three times its first round's).
   */
  warmupMessages: 3_000,
  /** Long enough that a round is seconds for both blocks, not mostly the pipeline's latency. */
  messagesPerRun: 3_000,
  rounds: 3,
  runTimeoutMs: 120_000,
  /** acceptSubmission requests straight over NATS, `connections` in flight. */
  directRequests: 600,
} as const;

/**
 * After each run (and the warm-up), the benchmark waits until the platform is idle again: its
 * processes together used less than `idleShare` of a core over one poll. So no run shares the
 * machine with the events, relays and consumers of the one before, and the CPU of a run's
 * messages is also given with its tail (what the platform did for them after their last 250).
 */
const SETTLE = { pollMs: 200, idleShare: 0.1, maxMs: 20_000 } as const;

/** Issue 16's target. */
const TARGETS = { ratioToBare: 0.4 } as const;

const DELIVERY_STOP_TIMEOUT_MS = 10_000;
/** The platform services whose CPU per message the breakdown names. */
const BREAKDOWN_SERVICES = ['smtp', 'messages', 'accounts'] as const;
const BENCH_LABEL = 'bench (nodemailer)';
const BARE_LABEL = 'bare-smtp-sink';

interface RunFigures extends PoolRun, BlockRun {
  /** CPU ms per message by process label, from the first message to the last 250 (null without /proc). */
  cpuMsPerMessage: Record<string, number> | null;
  /** The same until the platform was idle again after the run (see SETTLE). */
  cpuMsPerMessageSettled: Record<string, number> | null;
  /** How long after the last 250 the platform was idle again (SETTLE.maxMs: it was not). */
  settledAfterMs: number;
}

interface DirectFigures {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  meanLatencyMs: number;
  failures: number;
  /** CPU ms per request by process label (null without /proc). */
  cpuMsPerRequest: Record<string, number> | null;
}

/** A small plain + HTML message, the same bytes for both blocks but its recipient. */
function message(from: string, runId: string, index: number): SmtpMessage {
  return alternativeMessage({
    from,
    fromName: 'Bench',
    to: `r${index}-${runId}@recipient.example.test`,
    headers: [`Subject: SMTP benchmark ${index}`],
    text: `Hello from the SMTP benchmark, message ${index}.`.repeat(10),
    html: `<p>Hello from the SMTP benchmark, message ${index}.</p>`.repeat(10),
  });
}

function messages(from: string, runId: string, count: number, first: number): SmtpMessage[] {
  return Array.from({ length: count }, (_, offset) => message(from, runId, first + offset));
}

async function createSmtpCredential(
  gateway: { baseUrl: string; ca: string },
  account: BenchAccount,
): Promise<CreatedSmtpCredentialRecord> {
  const created = await sendTrusted(gateway, {
    method: 'POST',
    path: `/v2/accounts/${account.accountId}/smtp-credentials`,
    headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench', scope: 'global' }),
  });
  if (created.status !== 201) {
    throw new Error(
      `creating the SMTP credential: ${created.status} ${created.body.slice(0, 300)}`,
    );
  }
  return JSON.parse(created.body) as CreatedSmtpCredentialRecord;
}

function perMessage(
  spent: Record<string, number> | null,
  count: number,
): Record<string, number> | null {
  if (spent === null) return null;
  return Object.fromEntries(
    Object.entries(spent).map(([label, ms]) => [label, ms / Math.max(1, count)]),
  );
}

/** CPU ms of the platform's processes (neither the benchmark, its sink, nor other work). */
function platformCpuMs(spent: Record<string, number> | null): number | null {
  if (spent === null) return null;
  const outside = new Set([BENCH_LABEL, BARE_LABEL, OTHER_PROCESSES]);
  return Object.entries(spent)
    .filter(([label]) => !outside.has(label))
    .reduce((sum, [, ms]) => sum + ms, 0);
}

/** Polls until the platform is idle (see SETTLE); the last snapshot and how long it took. */
async function settle(
  cpu: ProcessCpu,
  signal: AbortSignal,
): Promise<{ snapshot: CpuSnapshot | null; waitedMs: number }> {
  const started = performance.now();
  let previous = cpu.snapshot();
  for (;;) {
    await delay(SETTLE.pollMs, undefined, { signal });
    const current = cpu.snapshot();
    const busyMs = platformCpuMs(cpuBetween(previous, current));
    const waitedMs = performance.now() - started;
    previous = current;
    if (busyMs === null || busyMs < SETTLE.pollMs * SETTLE.idleShare) {
      return { snapshot: current, waitedMs };
    }
    if (waitedMs >= SETTLE.maxMs) return { snapshot: current, waitedMs: SETTLE.maxMs };
  }
}

async function measureRun(
  pool: SmtpPool,
  block: RunFigures['block'],
  round: number,
  batch: readonly SmtpMessage[],
  cpu: ProcessCpu,
  signal: AbortSignal,
): Promise<RunFigures> {
  const before = cpu.snapshot();
  const run = await pool.run(batch, SETTINGS.runTimeoutMs);
  const spent = cpuBetween(before, cpu.snapshot());
  const settled = await settle(cpu, signal);
  return {
    ...run,
    block,
    round,
    messagesPerSecond: run.accepted / run.seconds,
    cpuMsPerMessage: perMessage(spent, run.accepted),
    cpuMsPerMessageSettled: perMessage(cpuBetween(before, settled.snapshot), run.accepted),
    settledAfterMs: Math.round(settled.waitedMs),
  };
}

/** acceptSubmission requests straight over NATS, as the smtp app sends them, `connections` in flight. */
async function measureDirect(
  natsUrl: string,
  request: (index: number) => AcceptSubmissionRequest,
  first: number,
  cpu: ProcessCpu,
): Promise<DirectFigures> {
  const connection = await connectNats({ servers: natsUrl.split(','), name: 'envoi-bench' });
  try {
    const rpc = new RpcClient(connection);
    let next = first;
    let failures = 0;
    let latencyMs = 0;
    const end = first + SETTINGS.directRequests;
    const started = Date.now();
    const before = cpu.snapshot();
    const worker = async () => {
      for (let index = next++; index < end; index = next++) {
        const sent = process.hrtime.bigint();
        try {
          await rpc.request(MessagesSubjects.acceptSubmission, request(index));
        } catch {
          failures += 1;
        }
        latencyMs += Number(process.hrtime.bigint() - sent) / 1e6;
      }
    };
    await Promise.all(Array.from({ length: SETTINGS.connections }, worker));
    const seconds = (Date.now() - started) / 1000;
    const spent = cpuBetween(before, cpu.snapshot());
    return {
      cpuMsPerRequest: perMessage(spent, SETTINGS.directRequests),
      requests: SETTINGS.directRequests,
      seconds,
      requestsPerSecond: SETTINGS.directRequests / seconds,
      meanLatencyMs: latencyMs / SETTINGS.directRequests,
      failures,
    };
  } finally {
    await connection.drain();
  }
}

function meanCpu(runs: readonly RunFigures[], label: string): number {
  return mean(runs.map((run) => run.cpuMsPerMessage?.[label] ?? 0));
}

function breakdown(
  envoi: readonly RunFigures[],
  bare: readonly RunFigures[],
  direct: DirectFigures,
): string[] {
  const transactionMs =
    (SETTINGS.connections * 1000) / mean(envoi.map((run) => run.messagesPerSecond));
  const platformCpu = BREAKDOWN_SERVICES.reduce((sum, label) => sum + meanCpu(envoi, label), 0);
  const accountsSmtp = meanCpu(envoi, 'accounts');
  const accountsDirect = direct.cpuMsPerRequest?.['accounts'] ?? Number.NaN;
  const cpuByLabel = new Map<string, number>();
  for (const run of envoi) {
    for (const [label, ms] of Object.entries(run.cpuMsPerMessage ?? {})) {
      cpuByLabel.set(label, (cpuByLabel.get(label) ?? 0) + ms / envoi.length);
    }
  }
  return [
    ...[...cpuByLabel.entries()]
      .sort(([, a], [, b]) => b - a)
      .filter(([, ms]) => ms >= 0.005)
      .map(([label, ms]) => `CPU per message, ${label}: ${fixed(ms, 3)} ms`),
    `platform CPU per message until it was idle again (${integer(mean(envoi.map((run) => run.settledAfterMs)))} ms after the last 250 on average): ${fixed(mean(envoi.map((run) => platformCpuMs(run.cpuMsPerMessageSettled) ?? Number.NaN)), 3)} ms (${fixed(mean(envoi.map((run) => platformCpuMs(run.cpuMsPerMessage) ?? Number.NaN)), 3)} ms until the last 250)`,
    `bare sink CPU per message: ${fixed(meanCpu(bare, BARE_LABEL), 3)} ms; its clients': ${fixed(meanCpu(bare, BENCH_LABEL), 3)} ms`,
    `one SMTP transaction (MAIL, RCPT, DATA → 250) on a pooled connection: ${fixed(transactionMs, 1)} ms`,
    `acceptSubmission alone (NATS request → committed, ${SETTINGS.connections} in flight): ${fixed(direct.meanLatencyMs, 1)} ms mean, ${integer(direct.requestsPerSecond)} requests/s = ${fixed((100 * direct.meanLatencyMs) / transactionMs, 0)} % of a transaction`,
    `accounts CPU per message: ${fixed(accountsSmtp, 3)} ms over SMTP, ${fixed(accountsDirect, 3)} ms per acceptSubmission alone (no request per submission: it counts their reception events); the difference (an upper bound on login verification) is ${fixed((100 * Math.max(0, accountsSmtp - accountsDirect)) / Math.max(platformCpu, 1e-9), 1)} % of the smtp + messages + accounts CPU (logins are cached per replica; the pool logs in once per connection)`,
  ];
}

function runLine(run: RunFigures): string {
  const name =
    run.block === 'bare'
      ? 'bare smtp-server sink (parses only)'
      : 'Envoi smtp → messages (committed)';
  return `  ${name.padEnd(38)} round ${run.round}  ${integer(run.messagesPerSecond).padStart(6)} messages/s  (${run.accepted}/${run.messages} in ${fixed(run.seconds, 2)} s${run.failures > 0 ? `, ${run.failures} failed: ${run.firstFailure ?? ''}` : ''})`;
}

runBenchmark('smtp-throughput', async (run) => {
  const { root, dataDir, stoppers, signal, log } = run;
  const { platform, dns } = await startPlatformWithDns(run);
  // Only submitting is measured: the recipients' domains do not resolve here, so a running
  // delivery service would bounce every message while sharing the machine.
  const delivery = platform.services.find((service) => service.name === 'delivery');
  if (delivery) {
    log('stopping the delivery service: delivery jobs stay in the DELIVERY work queue');
    await delivery.stop(DELIVERY_STOP_TIMEOUT_MS);
  }

  const runId = randomUUID().slice(0, 8);
  const ca = readFileSync(platform.certificate.certPath, 'utf8');
  const gateway = { baseUrl: platform.baseUrl, ca };
  const account = await createBenchAccount(platform);
  const domain = await createVerifiedDomain(
    gateway,
    account,
    dns,
    `s${runId}.example.test`,
    signal,
  );
  const credential = await createSmtpCredential(gateway, account);
  log(
    `account ${account.accountId}, sending domain ${domain.domain}, SMTP login ${credential.username}`,
  );

  const barePort = await findFreePort();
  const bareSink = await startReadyWorker(
    BARE_LABEL,
    path.join(root, 'dist', 'tools', 'bench', 'bare-smtp-sink.js'),
    {
      PATH: process.env['PATH'],
      TLS_CERT_FILE: platform.certificate.certPath,
      TLS_KEY_FILE: platform.certificate.keyPath,
      BENCH_PORT: String(barePort),
    },
    dataDir,
    stoppers,
  );
  const cpu = new ProcessCpu(BENCH_LABEL);
  for (const service of platform.services) cpu.label(service.child.pid, service.name);
  cpu.label(bareSink.pid, BARE_LABEL);

  const targets: Record<RunFigures['block'], SmtpTarget> = {
    envoi: {
      name: 'envoi',
      port: platform.smtpSubmission.port,
      ca,
      login: { username: credential.username, password: credential.password },
    },
    bare: {
      name: 'bare',
      port: barePort,
      ca,
      login: { username: BARE_SMTP_USERNAME, password: BARE_SMTP_PASSWORD },
    },
  };
  const pools = {
    envoi: new SmtpPool(targets.envoi, SETTINGS.connections),
    bare: new SmtpPool(targets.bare, SETTINGS.connections),
  };
  stoppers.add('smtp client pools', () => {
    pools.envoi.close();
    pools.bare.close();
    return Promise.resolve();
  });
  const from = `bench@${domain.domain}`;
  let sent = 0;
  const batch = (count: number) => {
    const next = messages(from, runId, count, sent);
    sent += count;
    return next;
  };

  log(
    `warm-up: ${SETTINGS.warmupMessages} messages to each block over ${SETTINGS.connections} pooled connections`,
  );
  const problems: string[] = [];
  for (const block of ['bare', 'envoi'] as const) {
    const warmup = await pools[block].run(batch(SETTINGS.warmupMessages), SETTINGS.runTimeoutMs);
    if (warmup.failures > 0)
      problems.push(`${block} warm-up: ${warmup.failures} failed: ${warmup.firstFailure ?? ''}`);
    await settle(cpu, signal);
  }
  const runs = await interleavedRounds(
    SETTINGS.rounds,
    (block, round) =>
      measureRun(pools[block], block, round, batch(SETTINGS.messagesPerRun), cpu, signal),
    { signal, log, problems },
    runLine,
  );

  log(
    `acceptSubmission alone: ${SETTINGS.directRequests} requests over NATS, ${SETTINGS.connections} in flight`,
  );
  const direct = await measureDirect(
    platform.natsUrl,
    (index) => {
      const sample = message(from, runId, index);
      return {
        account_id: account.accountId,
        credential_id: credential.id,
        credential_sandbox: false,
        envelope_from: from,
        recipients: [sample.to],
        raw_base64: sample.raw.toString('base64'),
        submission_id: randomUUID(),
      };
    },
    sent,
    cpu,
  );
  if (direct.failures > 0) problems.push(`${direct.failures} acceptSubmission requests failed`);

  const envoi = runs.filter((run) => run.block === 'envoi');
  const bare = runs.filter((run) => run.block === 'bare');
  const ratio = ratioOf(runs);
  const lines = breakdown(envoi, bare, direct);
  const results = [
    printRatioTarget({
      heading: `SMTP submission: ${SETTINGS.messagesPerRun} messages (${message(from, runId, 0).raw.length} B, multipart text + HTML) per run over ${SETTINGS.connections} pooled nodemailer connections (STARTTLS + AUTH PLAIN), until each 250`,
      runs,
      line: runLine,
      breakdown: lines,
      target: 'messages/s submitted over SMTP until committed (÷ the bare smtp-server sink)',
      threshold: TARGETS.ratioToBare,
      issue: 16,
    }),
  ];
  return {
    report: {
      settings: SETTINGS,
      runs,
      direct,
      ratio,
      breakdown: lines,
      targets: results,
      problems,
    },
    problems,
  };
});
