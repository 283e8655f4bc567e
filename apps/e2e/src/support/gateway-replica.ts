import path from 'node:path';

import {
  findFreePort,
  type ManagedProcess,
  startProcess,
  waitForSignal,
} from '@envoi/shared-infra';
import { READY_SIGNAL } from '@envoi/shared-observability';

import { e2eEnvironment } from './environment';

const GATEWAY = path.resolve(__dirname, '../../../../dist/apps/gateway/src/main.js');

/** Another gateway process on the platform's NATS and database, with its own settings. */
export interface GatewayReplica {
  port: number;
  /** Request options that address this replica. */
  target: { port: number; host: string };
  stop(): Promise<void>;
}

export async function startGatewayReplica(
  name: string,
  settings: Record<string, string>,
): Promise<GatewayReplica> {
  const environment = e2eEnvironment();
  const port = await findFreePort();
  const replica: ManagedProcess = startProcess(name, process.execPath, [GATEWAY], {
    env: {
      ...environment.serviceEnv,
      HTTPS_PORT: String(port),
      HTTPS_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...settings,
    },
    log: {
      kind: 'file',
      path: path.join(path.dirname(environment.caFile), '..', 'logs', `${name}.log`),
    },
  });
  await waitForSignal(replica, READY_SIGNAL, 30_000);
  return { port, target: { port, host: '127.0.0.1' }, stop: () => replica.stop() };
}
