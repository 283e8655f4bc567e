import { generateKeyPairSync, type KeyObject } from 'node:crypto';

import { createTransport } from 'nodemailer';

import { type PoolOutcome, runPool, serveBareRuns } from './bare-process-child';
import {
  BARE_RESULT,
  BARE_RUN,
  type BareRunRequest,
  type BareRunResult,
} from './bare-sender.constants';

/**
 * The bare block of the delivery benchmark (perf-baselines "SMTP"): a nodemailer pooled transport
 * (`pool: true`, 5 connections, 100 messages per connection, like the delivery service's
 * defaults) sending ready-made ~2 KB messages to the benchmark's SMTP sink, optionally
 * DKIM-signed with an RSA-2048 key parsed once into a `KeyObject`. It runs as its own process,
 * like the delivery service it is compared with, and takes its runs over IPC:
 * `{type: BARE_RUN, …}` in, `{type: BARE_RESULT, …}` out. Each run is a fresh pool, warmed up
 * with `warmup` messages before the `count` measured ones.
 */

/** Messages handed to the pool at once: enough to keep every connection busy, bounded memory. */
const WINDOW = 20;
/** A whole run (warm-up included) gives up after this long. */
const RUN_LIMIT_MS = 120_000;

let dkimKey: KeyObject | undefined;

function key(): KeyObject {
  dkimKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  return dkimKey;
}

/** The template with a Message-ID of its own (as every real message has). */
function messageFrom(template: string, label: string): string {
  return template.replace(/^Message-ID:[^\r\n]*(\r?\n[ \t][^\r\n]*)*/im, `Message-ID: <${label}>`);
}

function sendAll(
  request: BareRunRequest,
  phase: 'w' | 'm',
  count: number,
  transport: ReturnType<typeof createTransport>,
  deadline: AbortSignal,
): Promise<PoolOutcome> {
  return runPool(count, WINDOW, deadline, (index) => {
    const to = `${request.recipientPrefix}${phase}${index}@${request.recipientDomain}`;
    return transport.sendMail({
      envelope: { from: request.envelopeFrom, to: [to] },
      raw: messageFrom(request.template, `${phase}${index}.${request.recipientPrefix}@bench`),
    });
  });
}

async function run(request: BareRunRequest): Promise<BareRunResult> {
  const transport = createTransport({
    pool: true,
    maxConnections: request.maxConnections,
    maxMessages: 100,
    host: '127.0.0.1',
    port: request.port,
    secure: false,
    ignoreTLS: !request.starttls,
    // The sink's certificate is self-signed; the delivery service does not verify either.
    tls: { rejectUnauthorized: false, minVersion: 'TLSv1.2' },
    logger: false,
    ...(request.dkim
      ? { dkim: { domainName: request.dkimDomain, keySelector: 'bench', privateKey: key() } }
      : {}),
  });
  const deadline = AbortSignal.timeout(RUN_LIMIT_MS);
  try {
    const warm = await sendAll(request, 'w', request.warmup, transport, deadline);
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    const measured = await sendAll(request, 'm', request.count, transport, deadline);
    const seconds = (performance.now() - startedAt) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    return {
      type: BARE_RESULT,
      id: request.id,
      seconds,
      errors: warm.errors + measured.errors,
      firstError: warm.firstError ?? measured.firstError,
      cpuMs: (cpu.user + cpu.system) / 1000,
    };
  } finally {
    transport.close();
  }
}

function main(): void {
  key();
  serveBareRuns<BareRunRequest, BareRunResult>(BARE_RUN, run, (request, error) => ({
    type: BARE_RESULT,
    id: request.id,
    seconds: NaN,
    errors: request.count,
    firstError: error,
    cpuMs: NaN,
  }));
}

main();
