import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { connectNats } from '@envoi/shared-nats';
import { READY_SIGNAL } from '@envoi/shared-observability';
import { pollUntil } from '@envoi/shared-testing';
import { Client } from 'pg';

const run = promisify(execFile);

export const WORKSPACE_ROOT = path.resolve(__dirname, '../../..');

/** A process this harness started, stopped by its own PID only. */
export interface ChildHandle {
  name: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** SIGKILL to this process (its own PID only), resolved once it has exited. */
  kill(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function startChild(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
): ChildHandle {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  const log = createWriteStream(logFile, { flags: 'a' });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    name,
    child,
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      log.end();
    },
  };
}

function waitForReady(handle: ChildHandle, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const { child } = handle;
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(
      () => done(new Error(`${handle.name} was not ready within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (message: unknown) => {
      if ((message as { type?: unknown } | null)?.type === READY_SIGNAL.type) done();
    };
    const onExit = (code: number | null) =>
      done(new Error(`${handle.name} exited with ${code} before it was ready (see its log)`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/**
 * A private slice of the platform for one test file: its own database (on the PostgreSQL of the
 * global setup) and its own nats-server, so that the services started here (their queue groups,
 * relays and periodic jobs) never meet those of other test files running at the same time.
 */
export class IsolatedPlatform {
  readonly children: ChildHandle[] = [];

  private constructor(
    readonly dir: string,
    readonly databaseUrl: string,
    readonly natsUrl: string,
    private readonly adminUrl: string,
    private readonly databaseName: string,
    private readonly nats: ChildHandle,
  ) {}

  static async start(): Promise<IsolatedPlatform> {
    const adminUrl = process.env['DATABASE_URL'];
    if (!adminUrl) throw new Error('DATABASE_URL is not set (run through jest.int.config.cjs)');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'envoi-delivery-int-'));
    const databaseName = `envoi_delivery_${randomBytes(6).toString('hex')}`;
    const admin = new Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${databaseName}`);
    } finally {
      await admin.end();
    }
    const url = new URL(adminUrl);
    url.pathname = `/${databaseName}`;
    const port = await freePort();
    const nats = startChild(
      'nats',
      'nats-server',
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', path.join(dir, 'nats')],
      process.env,
      path.join(dir, 'nats.log'),
    );
    const natsUrl = `nats://127.0.0.1:${port}`;
    const platform = new IsolatedPlatform(
      dir,
      url.toString(),
      natsUrl,
      adminUrl,
      databaseName,
      nats,
    );
    try {
      await pollUntil(
        async () => {
          const connection = await connectNats({ servers: [natsUrl], name: 'probe' });
          await connection.close();
          return true;
        },
        (ok) => ok,
        { timeoutMs: 15_000, intervalMs: 100, what: 'the private nats-server' },
      );
    } catch (error) {
      await platform.stop();
      throw error;
    }
    return platform;
  }

  /** Compiles the workspace into dist/ (a few hundred ms with SWC): services run from there. */
  static async build(): Promise<void> {
    await run(process.execPath, [path.join(WORKSPACE_ROOT, 'tools/build/compile.mjs'), '--quiet'], {
      cwd: WORKSPACE_ROOT,
      timeout: 120_000,
    });
  }

  /** The environment every service of this platform gets. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      ...process.env,
      DATABASE_URL: this.databaseUrl,
      NATS_URL: this.natsUrl,
      LOG_LEVEL: 'warn',
      ...extra,
    };
  }

  /** Runs the service's migrations, then starts it from dist/ and waits until it is ready. */
  async startService(name: string, env: NodeJS.ProcessEnv): Promise<ChildHandle> {
    const dist = path.join(WORKSPACE_ROOT, 'dist', 'apps', name, 'src');
    await run(process.execPath, [path.join(dist, 'migrate.js')], { env, timeout: 60_000 });
    const handle = startChild(
      name,
      process.execPath,
      ['--enable-source-maps', path.join(dist, 'main.js')],
      env,
      path.join(this.dir, `${name}.log`),
    );
    this.children.push(handle);
    try {
      await waitForReady(handle, 60_000);
    } catch (error) {
      throw new Error(`${String(error)}; log: ${path.join(this.dir, `${name}.log`)}`);
    }
    return handle;
  }

  /** Stops every process it started (by PID), then drops the database and the directory. */
  async stop(): Promise<void> {
    for (const child of [...this.children].reverse()) await child.stop();
    await this.nats.stop();
    const admin = new Client({ connectionString: this.adminUrl });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${this.databaseName} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
    if (!process.env['DELIVERY_INT_KEEP_LOGS']) rmSync(this.dir, { recursive: true, force: true });
  }
}
