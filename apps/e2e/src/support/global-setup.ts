import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, unwatchFile } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { findFreePort, startPlatform } from '@envoi/shared-infra';
import { setTestInfrastructure, SmtpSink } from '@envoi/shared-testing';

import { startZoneFileDns } from './dns-zone';
import { exportE2eEnvironment } from './environment';
import { persistReceipts } from './smtp-receipts';

const TRUSTED_PROXY_IP = '127.0.0.3';
/** Recipients @example.net are delivered to the loopback SMTP sink. */
export const RECIPIENT_DOMAIN = 'example.net';
const RECIPIENT_MX = 'mx.e2e.test';

/**
 * Starts the whole platform from dist/ exactly as `npm start` does (embedded PostgreSQL, a local
 * nats-server with JetStream, migrations, every service as its own process), on free ports.
 * Service logs go to files under the temporary data directory, kept when E2E_KEEP_DATA is set.
 */
export default async function globalSetup(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'envoi-e2e-'));
  chmodSync(dataDir, 0o755); // PostgreSQL runs as the `postgres` user when we are root
  const root = path.resolve(__dirname, '../../../..');
  // The recipients' mail server: example.net's MX is an SMTP sink on loopback.
  const smtpPort = await findFreePort();
  const sink = await SmtpSink.start('127.0.0.1', smtpPort);
  const smtpReceiptsDir = path.join(dataDir, 'smtp-receipts');
  persistReceipts(sink, smtpReceiptsDir);
  // The operator's smarthost for notifications to account members: another sink, plain SMTP.
  const notificationsPort = await findFreePort();
  const notificationsSink = await SmtpSink.start('127.0.0.1', notificationsPort, false);
  const notificationReceiptsDir = path.join(dataDir, 'notification-receipts');
  persistReceipts(notificationsSink, notificationReceiptsDir);
  const stopSinks = async (): Promise<void> => {
    await sink.stop();
    await notificationsSink.stop();
  };
  const dnsZoneFile = path.join(dataDir, 'dns-zone.json');
  const dns = await startZoneFileDns(dnsZoneFile, {
    [RECIPIENT_DOMAIN]: [{ type: 'MX', exchange: RECIPIENT_MX, priority: 10 }],
    [RECIPIENT_MX]: [{ type: 'A', address: '127.0.0.1' }],
  });
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
        // Every check-dns looks again (a spec breaks a domain seconds after verifying it).
        DNS_CHECK_CACHE_MS: '0',
        SMTP_OUTBOUND_PORT: String(smtpPort),
        // Retries in seconds, not hours, so deferrals resolve within a test.
        RETRY_SCHEDULE_MS: '500,1000,2000',
        // Held mail of a suspended account goes out within a fraction of a second of unsuspension.
        DELIVERY_SUSPENDED_RECHECK_MS: '300',
        // Webhook retries 5 ms × n⁴ apart (all 6 attempts within ~5 s), a hung endpoint fails in 2 s.
        WEBHOOK_RETRY_BASE_MS: '5',
        WEBHOOK_TIMEOUT_MS: '2000',
        // Route retries 5 ms × n⁴ apart, a hung route URL fails in 2 s.
        ROUTE_RETRY_BASE_MS: '5',
        ROUTE_TIMEOUT_MS: '2000',
        // Stream listeners are pinged (and their attachment renewed) several times a second.
        WEBHOOK_STREAM_PING_INTERVAL_MS: '300',
        NOTIFICATIONS_SMTP_URL: `smtp://127.0.0.1:${notificationsPort}`,
        NOTIFICATIONS_FROM: 'Envoi <no-reply@envoi.test>',
        NOTIFICATIONS_RETRY_MS: '200',
      },
    });
  } catch (error) {
    unwatchFile(dnsZoneFile);
    await dns.stop();
    await stopSinks();
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
    smtpReceiptsDir,
    notificationReceiptsDir,
    health: platform.health,
    smtpSubmission: platform.smtpSubmission,
    smtpMx: platform.smtpMx,
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
      await stopSinks();
    },
  });
}
