import 'reflect-metadata';

import { rmSync } from 'node:fs';
import path from 'node:path';

import { startPlatform } from '@envoi/shared-infra';
import { connectNats, RpcClient } from '@envoi/shared-nats';

import {
  dataDirectory,
  devSecretsEnv,
  ensureDevSecrets,
  repositoryRoot,
  runtimeFile,
  writeRuntimeInfo,
} from '../runtime/runtime-files';
import { ensureDevAccount } from './dev-account';

function port(name: string, fallback: number): number {
  const value = process.env[name];
  return value ? Number(value) : fallback;
}

/**
 * `npm start`: the whole platform on this machine. PostgreSQL (embedded) and NATS (nats-server
 * with JetStream) are started unless DATABASE_URL / NATS_URL are set; data lives in .data/.
 */
async function main(): Promise<void> {
  const root = repositoryRoot();
  const dataDir = dataDirectory();
  const secrets = ensureDevSecrets(dataDir);
  const log = (line: string) => console.log(`[start] ${line}`);
  const platform = await startPlatform({
    distDir: path.join(root, 'dist'),
    dataDir,
    persistent: true,
    env: process.env,
    ports: {
      postgres: port('ENVOI_POSTGRES_PORT', 54320),
      nats: port('ENVOI_NATS_PORT', 42220),
      https: port('HTTPS_PORT', 8443),
      smtp: port('ENVOI_SMTP_PORT', 2587),
      smtpMx: port('ENVOI_SMTP_MX_PORT', 2525),
    },
    logTo: 'console',
    serviceEnv: devSecretsEnv(secrets, process.env),
    log,
  });

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping');
    await platform.stop();
    rmSync(runtimeFile(dataDir), { force: true });
    process.exit(code);
  };
  process.on('SIGINT', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  for (const service of platform.services) {
    void service.exited.then((code) => {
      if (stopping) return;
      log(`${service.name} exited unexpectedly (code ${code}); stopping everything`);
      void stop(1);
    });
  }

  const connection = await connectNats({
    servers: platform.natsUrl.split(','),
    name: 'envoi-start',
  });
  const account = await ensureDevAccount(new RpcClient(connection), dataDir, {
    base_url: platform.baseUrl,
    health: platform.health,
    smtp_submission: platform.smtpSubmission,
    smtp_mx: platform.smtpMx,
  });
  await connection.drain();
  writeRuntimeInfo(dataDir, {
    pid: process.pid,
    base_url: platform.baseUrl,
    nats_url: platform.natsUrl,
  });

  console.log(
    [
      '',
      'Envoi is running. Press Ctrl-C to stop.',
      `  HTTPS base URL: ${account.base_url}   (self-signed certificate: ${platform.certificate.certPath})`,
      `  Account id:     ${account.account_id}`,
      `  API key:        ${account.api_key}`,
      `  SMTP:           ${account.smtp_submission.host}:${account.smtp_submission.port}   (STARTTLS, same certificate; credentials: POST /v2/accounts/{id}/smtp-credentials)`,
      `  SMTP MX:        ${account.smtp_mx.host}:${account.smtp_mx.port}   (inbound: routes, VERP bounces, complaints to ${account.smtp_mx.feedback_address})`,
      `  Saved to:       ${path.join(dataDir, 'dev-account.json')}`,
      '',
      `  Try: curl --cacert ${platform.certificate.certPath} -H "Authorization: Bearer ${account.api_key}" ${account.base_url}/v2/ping`,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  console.error(`[start] failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
