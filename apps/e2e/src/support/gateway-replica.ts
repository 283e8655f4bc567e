import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import {
  findFreePort,
  type ManagedProcess,
  startProcess,
  waitForSignal,
} from '@envoi/shared-infra';
import { READY_SIGNAL } from '@envoi/shared-observability';
import { pollUntil } from '@envoi/shared-testing';

import { e2eEnvironment } from './environment';

const GATEWAY = path.resolve(__dirname, '../../../../dist/apps/gateway/src/main.js');

/** Another gateway process on the platform's NATS and database, with its own settings. */
export interface GatewayReplica {
  port: number;
  /** Request options that address this replica. */
  target: { port: number; host: string };
  logPath: string;
  stop(): Promise<void>;
}

export async function startGatewayReplica(
  name: string,
  settings: Record<string, string>,
): Promise<GatewayReplica> {
  const environment = e2eEnvironment();
  const port = await findFreePort();
  const logPath = path.join(path.dirname(environment.caFile), '..', 'logs', `${name}.log`);
  const replica: ManagedProcess = startProcess(name, process.execPath, [GATEWAY], {
    env: {
      ...environment.serviceEnv,
      HTTPS_PORT: String(port),
      HTTPS_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...settings,
    },
    log: { kind: 'file', path: logPath },
  });
  await waitForSignal(replica, READY_SIGNAL, 30_000);
  return { port, target: { port, host: '127.0.0.1' }, logPath, stop: () => replica.stop() };
}

/**
 * Waits until every replica has logged that it holds the rate limits with `count` replicas
 * (each must run with LOG_LEVEL info or lower to say so).
 */
export async function rateLimitPeersHeard(
  replicas: GatewayReplica[],
  count: number,
): Promise<void> {
  const heard = (replica: GatewayReplica) =>
    existsSync(replica.logPath) &&
    readFileSync(replica.logPath, 'utf8')
      .split('\n')
      .some((line) => line.includes('rate limits held by') && line.includes(`"replicas":${count}`));
  await pollUntil(
    () => replicas.every(heard),
    (all) => all,
    { what: `every replica to hear ${count} rate-limit replicas`, timeoutMs: 10_000 },
  );
}
