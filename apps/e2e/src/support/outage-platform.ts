import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { AccountsSubjects } from '@envoi/contracts-accounts';
import {
  findFreePort,
  type ManagedProcess,
  type NatsHandle,
  type RunningPlatform,
  startNatsServer,
  startPlatform,
  startProcess,
  waitForSignal,
} from '@envoi/shared-infra';
import { RpcClient } from '@envoi/shared-nats';
import { READY_SIGNAL } from '@envoi/shared-observability';
import { pollUntil } from '@envoi/shared-testing';
import { connect } from 'nats';

import type { AccountSession } from './account-session';
import { KeyClient } from './api-client';
import { e2eEnvironment } from './environment';

const DIST_DIR = path.resolve(__dirname, '../../../../dist');

/**
 * A second, whole platform whose PostgreSQL and nats-server this test process owns, so that a
 * spec can take them down and bring them back (reliability plan S4, S5). Its services resolve
 * through the e2e DNS server and deliver to the e2e SMTP sink, like the shared platform's, and
 * serve the shared platform's certificate on their own port.
 */
export class OutagePlatform {
  /** Services started again after a kill; stopped with the platform. */
  private readonly restarted: ManagedProcess[] = [];

  private constructor(
    private readonly dataDir: string,
    private postgres: ManagedProcess,
    private readonly postgresPort: number,
    private nats: NatsHandle,
    private readonly natsPort: number,
    readonly platform: RunningPlatform,
  ) {}

  /** `serviceEnv`: extra settings for every service (a shorter RPC_TIMEOUT_MS, for instance). */
  static async start(serviceEnv: Record<string, string> = {}): Promise<OutagePlatform> {
    const environment = e2eEnvironment();
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'envoi-e2e-outage-'));
    chmodSync(dataDir, 0o755); // PostgreSQL runs as the `postgres` user when we are root
    mkdirSync(path.join(dataDir, 'logs'));
    const postgresPort = await findFreePort();
    const postgres = await startPostgres(dataDir, postgresPort);
    const postgresUrl = `postgres://envoi:envoi@127.0.0.1:${postgresPort}/envoi`;
    const natsPort = await findFreePort();
    const nats = await startNats(dataDir, natsPort).catch(async (error: unknown) => {
      await postgres.stop();
      throw error;
    });
    try {
      const shared = environment.serviceEnv;
      const platform = await startPlatform({
        distDir: DIST_DIR,
        dataDir,
        persistent: true,
        env: {
          ...process.env,
          DATABASE_URL: postgresUrl,
          NATS_URL: nats.url,
          TLS_CERT_FILE: environment.caFile,
          TLS_KEY_FILE: path.join(path.dirname(environment.caFile), 'key.pem'),
        },
        ports: { postgres: 'any', nats: 'any', https: 'any' },
        logTo: 'files',
        serviceEnv: {
          ...shared,
          DATABASE_URL: postgresUrl,
          NATS_URL: nats.url,
          HTTPS_HOST: '127.0.0.1',
          ...serviceEnv,
        },
      });
      return new OutagePlatform(dataDir, postgres, postgresPort, nats, natsPort, platform);
    } catch (error) {
      await nats.stop();
      await postgres.stop();
      throw error;
    }
  }

  /** A fresh account on this platform, as the admin command creates one (over its bus). */
  async createAccountSession(name: string): Promise<AccountSession> {
    const connection = await connect({ servers: [this.nats.url], name: 'e2e-outage' });
    try {
      const created = await new RpcClient(connection).request(AccountsSubjects.createAccount, {
        name,
      });
      const accountId = created.account.id;
      return {
        accountId,
        created,
        api: new KeyClient(created.api_key.secret_key, { port: this.platform.httpsPort }),
        path: (suffix = '') => `/v2/accounts/${accountId}${suffix}`,
      };
    } finally {
      await connection.drain();
    }
  }

  /**
   * PostgreSQL's immediate shutdown (what `pg_ctl stop -m immediate` sends: SIGQUIT to the
   * postmaster): every backend quits at once, nothing is checkpointed; the restart recovers
   * from the WAL.
   */
  async stopPostgresImmediately(): Promise<void> {
    const pidFile = path.join(this.dataDir, 'postgres', 'postmaster.pid');
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no postmaster pid in ${pidFile}`);
    process.kill(pid, 'SIGQUIT');
    await pollUntil(
      () => Promise.resolve(existsSync(pidFile) || isAlive(pid)),
      (running) => !running,
      { timeoutMs: 20_000, what: 'the postmaster to exit' },
    );
    await this.postgres.stop(5_000);
  }

  async startPostgresAgain(): Promise<void> {
    this.postgres = await startPostgres(this.dataDir, this.postgresPort);
  }

  /** nats-server killed outright (SIGKILL): no lame-duck mode, no flush. */
  async killNats(): Promise<void> {
    const child = this.nats.process.child;
    child.kill('SIGKILL');
    await this.nats.process.exited;
  }

  async startNatsAgain(): Promise<void> {
    this.nats = await startNats(this.dataDir, this.natsPort);
  }

  /** A service killed outright (SIGKILL): no shutdown hook runs, nothing is flushed. */
  async killService(name: string): Promise<void> {
    const running = [...this.platform.services, ...this.restarted].filter(
      (service) => service.name === name && service.child.exitCode === null,
    );
    if (running.length === 0) throw new Error(`no running ${name} process`);
    for (const service of running) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
  }

  /** The service started again from dist/ with the platform's settings; resolves once ready. */
  async startServiceAgain(name: string): Promise<void> {
    const child = startProcess(
      name,
      process.execPath,
      ['--enable-source-maps', path.join(DIST_DIR, 'apps', name, 'src', 'main.js')],
      {
        env: {
          ...this.platform.serviceEnv,
          HEALTH_HOST: '127.0.0.1',
          HEALTH_PORT: String(await findFreePort()),
        },
        log: { kind: 'file', path: path.join(this.dataDir, 'logs', `${name}-again.log`) },
      },
    );
    this.restarted.push(child);
    await waitForSignal(child, READY_SIGNAL, 60_000);
  }

  async stop(): Promise<void> {
    for (const service of this.restarted) await service.stop();
    await this.platform.stop();
    await this.nats.stop().catch(() => undefined);
    await this.postgres.stop().catch(() => undefined);
    if (!process.env['E2E_KEEP_DATA']) rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** PostgreSQL in a child process (postgres-process.ts), ready once it accepts connections. */
async function startPostgres(dataDir: string, port: number): Promise<ManagedProcess> {
  const child = startProcess(
    'postgres',
    process.execPath,
    [
      path.join(__dirname, '../../../../dist/apps/e2e/src/support/postgres-process.js'),
      path.join(dataDir, 'postgres'),
      String(port),
    ],
    { env: process.env, log: { kind: 'file', path: path.join(dataDir, 'logs', 'postgres.log') } },
  );
  try {
    await waitForSignal(child, READY_SIGNAL, 60_000);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return child;
}

function startNats(dataDir: string, port: number): Promise<NatsHandle> {
  return startNatsServer({
    storeDir: path.join(dataDir, 'nats'),
    port,
    log: { kind: 'file', path: path.join(dataDir, 'logs', 'nats.log') },
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
