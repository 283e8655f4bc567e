import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import {
  findFreePort,
  type ManagedProcess,
  type NatsHandle,
  runToCompletion,
  startNatsServer,
  startProcess,
  waitForSignal,
} from '@envoi/shared-infra';
import { READY_SIGNAL } from '@envoi/shared-observability';
import { Client } from 'pg';

const run = promisify(execFile);

export const WORKSPACE_ROOT = path.resolve(__dirname, '../../../..');

/** How long a child gets to shut down after SIGTERM before it gets SIGKILL. */
const STOP_GRACE_MS = 10_000;

/** A process this harness started; it stops (or kills) it by its own PID only. */
export interface ChildHandle {
  name: string;
  child: ManagedProcess['child'];
  stop(): Promise<void>;
  /** SIGKILL to this process (its own PID only), resolved once it has exited. */
  kill(): Promise<void>;
}

export interface IsolatedPlatformOptions {
  /**
   * The service whose tests own the platform (`accounts`, `messages`, …). It names the temporary
   * directory (`envoi-<owner>-int-*`), the database (`envoi_<owner>_*`) and the variable that keeps
   * the directory and its logs after `stop()` (`<OWNER>_INT_KEEP_LOGS`).
   */
  owner: string;
}

function childHandle(started: ManagedProcess): ChildHandle {
  const { name, child, exited } = started;
  return {
    name,
    child,
    stop: () => started.stop(STOP_GRACE_MS),
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Removes a platform's directory unless `<OWNER>_INT_KEEP_LOGS` asks to keep it. */
function removeDirectory(owner: string, dir: string): void {
  if (!process.env[`${owner.toUpperCase()}_INT_KEEP_LOGS`]) {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onAdminDatabase(adminUrl: string, sql: string): Promise<void> {
  const admin = new Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * A private slice of the platform for one test file: its own database (on the PostgreSQL of the
 * global setup) and its own nats-server, so that the services started here (their queue groups,
 * relays and periodic jobs) never meet those of other test files running at the same time.
 * Services run as processes from dist/ (see `build()`), each migrated before it starts.
 */
export class IsolatedPlatform {
  readonly children: ChildHandle[] = [];
  /** The accounts service's key for SMTP passwords at rest: one per platform, like its data. */
  readonly smtpPasswordEncryptionKey = randomBytes(32).toString('hex');

  private constructor(
    private readonly options: IsolatedPlatformOptions,
    readonly dir: string,
    readonly databaseUrl: string,
    readonly natsUrl: string,
    private readonly adminUrl: string,
    private readonly databaseName: string,
    private readonly nats: NatsHandle,
  ) {}

  static async start(options: IsolatedPlatformOptions): Promise<IsolatedPlatform> {
    const { owner } = options;
    if (!/^[a-z][a-z0-9_]*$/.test(owner)) throw new Error(`invalid platform owner: ${owner}`);
    const adminUrl = process.env['DATABASE_URL'];
    if (!adminUrl) throw new Error('DATABASE_URL is not set (run through jest.int.config.cjs)');
    const dir = mkdtempSync(path.join(os.tmpdir(), `envoi-${owner}-int-`));
    const databaseName = `envoi_${owner}_${randomBytes(6).toString('hex')}`;
    try {
      await onAdminDatabase(adminUrl, `CREATE DATABASE ${databaseName}`);
      const nats = await startNatsServer({
        storeDir: path.join(dir, 'nats'),
        port: await findFreePort(),
        log: { kind: 'file', path: path.join(dir, 'nats.log') },
      });
      const url = new URL(adminUrl);
      url.pathname = `/${databaseName}`;
      return new IsolatedPlatform(
        options,
        dir,
        url.toString(),
        nats.url,
        adminUrl,
        databaseName,
        nats,
      );
    } catch (error) {
      await onAdminDatabase(adminUrl, `DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`).catch(
        () => undefined,
      );
      removeDirectory(owner, dir);
      throw error;
    }
  }

  /** Compiles the workspace into dist/ (a few hundred ms with SWC): services run from there. */
  static async build(): Promise<void> {
    await run(process.execPath, [path.join(WORKSPACE_ROOT, 'tools/build/compile.mjs'), '--quiet'], {
      cwd: WORKSPACE_ROOT,
      timeout: 120_000,
    });
  }

  /** The environment every service of this platform gets, plus `extra`. */
  env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      ...process.env,
      DATABASE_URL: this.databaseUrl,
      NATS_URL: this.natsUrl,
      LOG_LEVEL: 'warn',
      SMTP_PASSWORD_ENCRYPTION_KEY: this.smtpPasswordEncryptionKey,
      ...extra,
    };
  }

  /**
   * The environment of a domains service beside the service under test that never looks anything
   * up in DNS (no resolver answers, the periodic re-check never comes due), with a fresh DKIM key.
   */
  offlineDomainsEnv(): NodeJS.ProcessEnv {
    return this.env({
      DKIM_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      DNS_SERVERS: '127.0.0.1:9',
      DNS_TIMEOUT_MS: '200',
      DNS_TRIES: '1',
      DNS_RECHECK_INTERVAL_MS: String(24 * 3_600_000),
      OUTBOX_RELAY_INTERVAL_MS: '100',
      SHUTDOWN_GRACE_MS: '200',
    });
  }

  /**
   * Runs the service's migrations (unless it owns no schema, like the smtp edge), then starts it
   * from dist/ and waits until it is ready.
   */
  async startService(
    name: string,
    env: NodeJS.ProcessEnv,
    options: { migrate?: boolean } = {},
  ): Promise<ChildHandle> {
    const dist = path.join(WORKSPACE_ROOT, 'dist', 'apps', name, 'src');
    if (options.migrate ?? true) {
      await runToCompletion(process.execPath, [path.join(dist, 'migrate.js')], env, 60_000);
    }
    const logFile = path.join(this.dir, `${name}.log`);
    const started = startProcess(
      name,
      process.execPath,
      ['--enable-source-maps', path.join(dist, 'main.js')],
      { env, log: { kind: 'file', path: logFile } },
    );
    const handle = childHandle(started);
    this.children.push(handle);
    try {
      await waitForSignal(started, READY_SIGNAL, 60_000);
    } catch (error) {
      throw new Error(`${String(error)}; log: ${logFile}`);
    }
    return handle;
  }

  /** Stops every process it started (by PID), then drops the database and the directory. */
  async stop(): Promise<void> {
    for (const child of [...this.children].reverse()) await child.stop();
    await this.nats.process.stop(STOP_GRACE_MS);
    await onAdminDatabase(
      this.adminUrl,
      `DROP DATABASE IF EXISTS ${this.databaseName} WITH (FORCE)`,
    );
    removeDirectory(this.options.owner, this.dir);
  }
}
