import 'reflect-metadata';

import { readFileSync } from 'node:fs';

import { AccountsSubjects } from '@envoi/contracts-accounts';
import { DomainsSubjects } from '@envoi/contracts-domains';
import { loadConfig } from '@envoi/shared-config';
import { Readiness, startHealthServer } from '@envoi/shared-health';
import {
  connectNats,
  exitOnStartFailure,
  natsCheck,
  putUpload,
  RpcClient,
  subscribeBroadcast,
} from '@envoi/shared-nats';
import { announceReady, createLogger } from '@envoi/shared-observability';

import { startMx } from './mx/mx-bootstrap';
import { SERVICE_NAME, SmtpConfig } from './smtp.config';
import { LoginCache } from './submission/login-cache';
import { SenderAuthorizer } from './submission/sender-authorizer';
import { type Listener, SubmissionServer } from './submission/submission-server';
import { SubmissionSession } from './submission/submission-session';
import { Submitter } from './submission/submitter';

/** Verified logins one replica keeps. */
const LOGIN_CACHE_MAX_ENTRIES = 10_000;
/** How long uploaded raw messages (above the inline size) live if never read. */
const UPLOAD_TTL_MS = 60 * 60 * 1000;

function listeners(config: SmtpConfig): Listener[] {
  const plain = config.submissionPorts().map((port) => ({ port, implicitTls: false }));
  return config.SMTP_IMPLICIT_TLS_PORT > 0
    ? [...plain, { port: config.SMTP_IMPLICIT_TLS_PORT, implicitTls: true }]
    : plain;
}

/**
 * The SMTP submission edge: it owns no data. It verifies logins and sender domains over the bus
 * (cached briefly, dropped at once on the change broadcasts) and hands each DATA transaction to
 * the messages service, answering 250 only once it is committed.
 */
async function bootstrap(): Promise<void> {
  const config = loadConfig(SmtpConfig);
  const logger = createLogger(SERVICE_NAME, config.LOG_LEVEL);
  const connection = await connectNats({ servers: config.natsServers(), name: SERVICE_NAME });
  const bus = new RpcClient(connection, config.RPC_TIMEOUT_MS);

  const logins = new LoginCache(
    config.scaled(config.SMTP_LOGIN_CACHE_TTL_MS),
    LOGIN_CACHE_MAX_ENTRIES,
  );
  const senders = new SenderAuthorizer(bus, config.scaled(config.SMTP_SENDER_CACHE_TTL_MS));
  const onBroadcastError = (error: unknown) => logger.warn({ err: error }, 'broadcast not handled');
  subscribeBroadcast(
    connection,
    AccountsSubjects.smtpCredentialChanged,
    (event) => logins.forgetCredential(event.credential_id),
    onBroadcastError,
  );
  subscribeBroadcast(
    connection,
    AccountsSubjects.accountStatusChanged,
    (event) => logins.forgetAccounts(event.account_ids),
    onBroadcastError,
  );
  subscribeBroadcast(
    connection,
    DomainsSubjects.domainChanged,
    (event) => senders.forget(event.account_id, event.domain),
    onBroadcastError,
  );
  // The broadcasts must be in place before the first session relies on a cached answer.
  await connection.flush();

  const submitter = new Submitter(
    bus,
    (bucket, name, bytes) => putUpload(connection, bucket, name, bytes, UPLOAD_TTL_MS),
    config.SMTP_SUBMIT_ATTEMPTS,
  );
  const session = new SubmissionSession({
    bus,
    logins,
    senders,
    submitter,
    limits: {
      maxMessageBytes: config.SMTP_MAX_MESSAGE_BYTES,
      maxTransactionsPerConnection: config.SMTP_MAX_TRANSACTIONS_PER_CONNECTION,
      authFailureDelayMs: config.scaled(config.SMTP_AUTH_FAILURE_DELAY_MS),
      authFailureDelayMaxMs: config.scaled(config.SMTP_IDLE_TIMEOUT_MS) / 2,
    },
  });
  const tls = {
    cert: readFileSync(config.SMTP_TLS_CERT_FILE, 'utf8'),
    key: readFileSync(config.SMTP_TLS_KEY_FILE, 'utf8'),
  };
  const server = new SubmissionServer(
    {
      hostname: config.SMTP_HOSTNAME,
      tls,
      maxMessageBytes: config.SMTP_MAX_MESSAGE_BYTES,
      maxRecipients: config.SMTP_MAX_RECIPIENTS,
      idleTimeoutMs: config.scaled(config.SMTP_IDLE_TIMEOUT_MS),
      maxConnections: config.SMTP_MAX_CONNECTIONS,
      maxConnectionsPerIp: config.SMTP_MAX_CONNECTIONS_PER_IP,
      drainMs: config.SHUTDOWN_GRACE_MS,
    },
    session,
    logger,
  );
  const ports = listeners(config);
  await server.listen(config.SMTP_HOST, ports);
  const mx = await startMx(config, connection, bus, tls, logger);

  const readiness = new Readiness().register('nats', natsCheck(connection));
  const health = await startHealthServer({
    host: config.HEALTH_HOST,
    port: config.HEALTH_PORT,
    readiness,
  });
  announceReady(logger, {
    host: config.SMTP_HOST,
    ports: ports.map((listener) => listener.port),
    ...(mx
      ? { mx: { port: config.SMTP_MX_PORT, feedback_address: config.mxFeedbackAddress() } }
      : {}),
    health: { host: config.HEALTH_HOST, port: health.port },
  });

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, sessions: server.connections }, 'stopping');
    readiness.markStopping();
    Promise.all([server.close(), mx?.close()])
      .then(() => connection.drain())
      .then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'unclean shutdown');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

bootstrap().catch(exitOnStartFailure(SERVICE_NAME));
