import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, unwatchFile } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { startPlatform } from '@envoi/shared-infra';
import { setTestInfrastructure } from '@envoi/shared-testing';

import { startZoneFileDns } from './dns-zone';
import { exportE2eEnvironment } from './environment';

const TRUSTED_PROXY_IP = '127.0.0.3';

/**
 * Starts the whole platform from dist/ exactly as `npm start` does (embedded PostgreSQL, a local
 * nats-server with JetStream, migrations, every service as its own process), on free ports.
 * Service logs go to files under the temporary data directory, kept when E2E_KEEP_DATA is set.
 */
export default async function globalSetup(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'envoi-e2e-'));
  chmodSync(dataDir, 0o755); // PostgreSQL runs as the `postgres` user when we are root
  const root = path.resolve(__dirname, '../../../..');
  const dnsZoneFile = path.join(dataDir, 'dns-zone.json');
  const dns = await startZoneFileDns(dnsZoneFile);
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  try {
    platform = await startPlatform({
      distDir: path.join(root, 'dist'),
      dataDir,
      persistent: false,
      env: { ...process.env, DATABASE_URL: '', NATS_URL: '' },
      ports: { postgres: 'any', nats: 'any', https: 'any' },
      logTo: 'files',
      serviceEnv: {
        CURSOR_SECRET: randomBytes(32).toString('hex'),
        IDEMPOTENCY_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
        HTTPS_HOST: '::',
        TRUSTED_PROXIES: TRUSTED_PROXY_IP,
        LOG_LEVEL: 'info',
        API_KEY_USAGE_FLUSH_MS: '500',
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: '1000',
      },
    });
  } catch (error) {
    unwatchFile(dnsZoneFile);
    await dns.stop();
    throw error;
  }
  exportE2eEnvironment({
    baseUrl: platform.baseUrl,
    natsUrl: platform.natsUrl,
    caFile: platform.certificate.certPath,
    httpsPort: platform.httpsPort,
    trustedProxyIp: TRUSTED_PROXY_IP,
    dnsServer: dns.address,
    dnsZoneFile,
    serviceEnv: Object.fromEntries(
      Object.entries(platform.serviceEnv).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      ),
    ),
  });
  setTestInfrastructure({
    dir: dataDir,
    stop: async () => {
      await platform.stop();
      unwatchFile(dnsZoneFile);
      await dns.stop();
    },
  });
}
