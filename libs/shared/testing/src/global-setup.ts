import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { findFreePort, startEmbeddedPostgres, startNatsServer } from '@envoi/shared-infra';

import { setTestInfrastructure } from './infrastructure-handle';

/**
 * Integration tier: one real PostgreSQL and one real nats-server (JetStream) for the whole run.
 * TEST_DATABASE_URL / TEST_NATS_URL point at existing servers instead. Workers inherit the
 * resulting DATABASE_URL and NATS_URL; each suite migrates the schemas it needs.
 */
export default async function globalSetup(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'envoi-int-'));
  chmodSync(dir, 0o755); // PostgreSQL runs as the `postgres` user when we are root
  const stoppers: Array<() => Promise<void>> = [];
  let databaseUrl = process.env['TEST_DATABASE_URL'];
  if (!databaseUrl) {
    const postgres = await startEmbeddedPostgres({
      dataDir: path.join(dir, 'postgres'),
      port: await findFreePort(),
      database: 'envoi_test',
      persistent: false,
    });
    stoppers.push(() => postgres.stop());
    databaseUrl = postgres.url;
  }
  let natsUrl = process.env['TEST_NATS_URL'];
  if (!natsUrl) {
    const nats = await startNatsServer({
      storeDir: path.join(dir, 'nats'),
      port: await findFreePort(),
      log: { kind: 'file', path: path.join(dir, 'nats.log') },
    });
    stoppers.push(() => nats.stop());
    natsUrl = nats.url;
  }
  process.env['DATABASE_URL'] = databaseUrl;
  process.env['NATS_URL'] = natsUrl;
  process.env['LOG_LEVEL'] = process.env['LOG_LEVEL'] ?? 'silent';
  setTestInfrastructure({
    dir,
    stop: async () => {
      for (const stop of stoppers.reverse()) await stop();
    },
  });
}
