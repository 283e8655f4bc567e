import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { AccountsSubjects } from '@envoi/contracts-accounts';
import {
  findFreePort,
  type ManagedProcess,
  type RunningPlatform,
  startPlatform,
  startProcess,
  waitForSignal,
} from '@envoi/shared-infra';
import { connectNats, RpcClient } from '@envoi/shared-nats';
import { READY_SIGNAL } from '@envoi/shared-observability';

/** Limits far above anything a loopback benchmark reaches, so no request is ever rejected. */
const UNREACHABLE_LIMIT = '1000000';

/** An HTTPS server under test: where it listens and where its log goes. */
export interface BenchServer {
  name: string;
  baseUrl: string;
  logFile: string;
  /** Its process id, when this benchmark started the process. */
  pid?: number;
}

/** A helper process without a port (a NATS responder). */
export interface BenchWorker {
  name: string;
  logFile: string;
  pid: number | undefined;
}

export interface BenchAccount {
  accountId: string;
  apiKey: string;
}

/**
 * Starts things and remembers how to stop each one (by handle, so by PID), in reverse order.
 * `stopAll` is safe to call more than once.
 */
export class Stoppers {
  private readonly stoppers: Array<{ name: string; stop: () => Promise<void> }> = [];

  add(name: string, stop: () => Promise<void>): void {
    this.stoppers.push({ name, stop });
  }

  async stopAll(log: (line: string) => void): Promise<void> {
    for (let next = this.stoppers.pop(); next; next = this.stoppers.pop()) {
      try {
        await next.stop();
      } catch (error) {
        log(
          `stopping ${next.name} failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }
}

/** A throwaway data directory like the end-to-end suite's (PostgreSQL may run as `postgres`). */
export function makeDataDir(): string {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'envoi-bench-'));
  chmodSync(dataDir, 0o755);
  return dataDir;
}

/**
 * The whole platform on free loopback ports, as apps/e2e's global setup starts it, with rate limits
 * raised out of reach. Its gateway holds rate limits with its peers (RATE_LIMIT_MODE=shared).
 * `serviceEnv` adds to (or overrides) every service's environment (a DNS server, for instance).
 */
export async function startBenchPlatform(
  root: string,
  dataDir: string,
  log: (line: string) => void,
  serviceEnv: NodeJS.ProcessEnv = {},
): Promise<RunningPlatform> {
  return startPlatform({
    distDir: path.join(root, 'dist'),
    dataDir,
    persistent: false,
    env: { ...process.env, DATABASE_URL: '', NATS_URL: '', TLS_CERT_FILE: '', TLS_KEY_FILE: '' },
    ports: { postgres: 'any', nats: 'any', https: 'any' },
    logTo: 'files',
    serviceEnv: {
      CURSOR_SECRET: randomBytes(32).toString('hex'),
      IDEMPOTENCY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      HTTPS_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MODE: 'shared',
      RATE_LIMIT_GENERAL_PER_SECOND: UNREACHABLE_LIMIT,
      RATE_LIMIT_GENERAL_BURST: UNREACHABLE_LIMIT,
      ...serviceEnv,
    },
    log,
  });
}

export function platformGateway(platform: RunningPlatform, dataDir: string): BenchServer {
  const pid = platform.services.find((service) => service.name === 'gateway')?.child.pid;
  return {
    name: 'gateway-shared',
    baseUrl: platform.baseUrl,
    logFile: path.join(dataDir, 'logs', 'gateway.log'),
    ...(pid === undefined ? {} : { pid }),
  };
}

/** An account with an all-scopes key, created over the bus as the admin command does. */
export async function createBenchAccount(platform: RunningPlatform): Promise<BenchAccount> {
  const connection = await connectNats({
    servers: platform.natsUrl.split(','),
    name: 'envoi-bench',
  });
  try {
    const created = await new RpcClient(connection).request(AccountsSubjects.createAccount, {
      name: `bench-${randomUUID().slice(0, 8)}`,
    });
    return { accountId: created.account.id, apiKey: created.api_key.secret_key };
  } finally {
    await connection.drain();
  }
}

/** Starts a Node program from dist/ and waits until it announces readiness over IPC. */
export async function startReadyWorker(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  dataDir: string,
  stoppers: Stoppers,
): Promise<BenchWorker> {
  const logFile = path.join(dataDir, 'logs', `${name}.log`);
  const child: ManagedProcess = startProcess(name, process.execPath, [script], {
    env,
    log: { kind: 'file', path: logFile },
  });
  stoppers.add(name, () => child.stop());
  await waitForSignal(child, READY_SIGNAL, 30_000);
  return { name, logFile, pid: child.child.pid };
}

/** Starts a Node program from dist/ that announces readiness over IPC, on a free port. */
async function startReadyProcess(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  portVariable: string,
  dataDir: string,
  stoppers: Stoppers,
): Promise<BenchServer> {
  const port = await findFreePort();
  const worker = await startReadyWorker(
    name,
    script,
    { ...env, [portVariable]: String(port) },
    dataDir,
    stoppers,
  );
  return {
    name,
    baseUrl: `https://127.0.0.1:${port}`,
    logFile: worker.logFile,
    ...(worker.pid === undefined ? {} : { pid: worker.pid }),
  };
}

/**
 * Another gateway process on the platform's NATS and database with its own settings, as
 * apps/e2e's gateway replicas are started.
 */
export function startGatewayReplica(
  root: string,
  platform: RunningPlatform,
  dataDir: string,
  name: string,
  settings: Record<string, string>,
  stoppers: Stoppers,
): Promise<BenchServer> {
  return startReadyProcess(
    name,
    path.join(root, 'dist', 'apps', 'gateway', 'src', 'main.js'),
    { ...platform.serviceEnv, HTTPS_HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...settings },
    'HTTPS_PORT',
    dataDir,
    stoppers,
  );
}

/** The bare block (bare-server.ts) with the platform's certificate. */
export function startBareServer(
  root: string,
  platform: RunningPlatform,
  dataDir: string,
  stoppers: Stoppers,
): Promise<BenchServer> {
  return startReadyProcess(
    'bare-fastify',
    path.join(root, 'dist', 'tools', 'bench', 'bare-server.js'),
    {
      PATH: process.env['PATH'],
      TLS_CERT_FILE: platform.certificate.certPath,
      TLS_KEY_FILE: platform.certificate.keyPath,
    },
    'BENCH_PORT',
    dataDir,
    stoppers,
  );
}

/**
 * The bare accept block (bare-accept.ts): a NATS responder that INSERTs into the platform's
 * PostgreSQL, then the plain Fastify HTTPS server that asks it, each in its own process.
 */
export async function startBareAccept(
  root: string,
  platform: RunningPlatform,
  dataDir: string,
  stoppers: Stoppers,
): Promise<{ server: BenchServer; responder: BenchWorker }> {
  const script = path.join(root, 'dist', 'tools', 'bench', 'bare-accept.js');
  const env = { PATH: process.env['PATH'], NATS_URL: platform.natsUrl };
  const responder = await startReadyWorker(
    'bare-accept-responder',
    script,
    { ...env, BARE_ROLE: 'responder', DATABASE_URL: platform.databaseUrl },
    dataDir,
    stoppers,
  );
  const server = await startReadyProcess(
    'bare-accept',
    script,
    {
      ...env,
      BARE_ROLE: 'http',
      TLS_CERT_FILE: platform.certificate.certPath,
      TLS_KEY_FILE: platform.certificate.keyPath,
    },
    'BENCH_PORT',
    dataDir,
    stoppers,
  );
  return { server, responder };
}

/** How many times a log file contains `text` (0 when the file is missing). */
export function countInLog(logFile: string, text: string): number {
  let content: string;
  try {
    content = readFileSync(logFile, 'utf8');
  } catch {
    return 0;
  }
  return content.split(text).length - 1;
}
