import { generateKeyPairSync, type KeyObject } from 'node:crypto';

import { READY_SIGNAL } from '@envoi/shared-observability';
import { createTransport } from 'nodemailer';

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

async function sendAll(
  request: BareRunRequest,
  phase: 'w' | 'm',
  count: number,
  transport: ReturnType<typeof createTransport>,
  deadline: AbortSignal,
): Promise<{ errors: number; firstError: string | null }> {
  let next = 0;
  let errors = 0;
  let firstError: string | null = null;
  const worker = async () => {
    while (next < count && !deadline.aborted) {
      const index = next++;
      const to = `${request.recipientPrefix}${phase}${index}@${request.recipientDomain}`;
      try {
        await transport.sendMail({
          envelope: { from: request.envelopeFrom, to: [to] },
          raw: messageFrom(request.template, `${phase}${index}.${request.recipientPrefix}@bench`),
        });
      } catch (error) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  await Promise.all(Array.from({ length: WINDOW }, () => worker()));
  if (deadline.aborted) firstError ??= `run stopped after ${RUN_LIMIT_MS} ms`;
  return { errors, firstError };
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
  process.on('message', (message: unknown) => {
    const request = message as BareRunRequest | null;
    if (request?.type !== BARE_RUN) return;
    run(request).then(
      (result) => process.send?.(result),
      (error: unknown) =>
        process.send?.({
          type: BARE_RESULT,
          id: request.id,
          seconds: NaN,
          errors: request.count,
          firstError: error instanceof Error ? error.message : String(error),
          cpuMs: NaN,
        } satisfies BareRunResult),
    );
  });
  // The parent's IPC channel closing (it stopped or died) ends this process too.
  process.on('disconnect', () => process.exit(0));
  process.once('SIGTERM', () => process.exit(0));
  process.once('SIGINT', () => process.exit(0));
  process.send?.(READY_SIGNAL);
}

main();
