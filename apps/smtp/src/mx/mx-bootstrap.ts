import { DomainsSubjects } from '@envoi/contracts-domains';
import { INBOUND_SPOOL_BUCKET, RoutesSubjects } from '@envoi/contracts-routes';
import { ensureUploadBucket, type RpcClient, subscribeBroadcast } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { ensureStream, eventsStreamDefinition } from '@envoi/shared-outbox';
import type { NatsConnection } from 'nats';

import type { SmtpConfig } from '../smtp.config';
import { mxContentLimits } from './content-check';
import { InboundSpool } from './inbound-spool';
import { MxServer } from './mx-server';
import { MxSession } from './mx-session';
import { ReturnPathHosts } from './return-path-hosts';
import { RouteSets } from './route-sets';

/** RFC 5321 asks a server to take at least 100 recipients per message. */
const MX_MAX_RECIPIENTS = 100;
/** RFC 5322's longest line, without its CRLF. */
const MX_MAX_LINE_OCTETS = 998;
const PUBLISH_ATTEMPTS = 3;
/** Return-path hosts one replica remembers the domains service's answer for. */
const RETURN_PATH_HOSTS_CACHED = 10_000;
/** Domains one replica keeps the route set of. */
const ROUTE_SETS_CACHED = 10_000;

/**
 * Starts the MX on SMTP_MX_PORT (none when 0): the spool bucket and the events stream are made
 * sure of first, so that the first message has somewhere to go.
 */
export async function startMx(
  config: SmtpConfig,
  connection: NatsConnection,
  bus: RpcClient,
  tls: { cert: string; key: string },
  logger: Logger,
): Promise<MxServer | null> {
  if (config.SMTP_MX_PORT === 0) return null;
  await ensureStream(connection, eventsStreamDefinition());
  const ttlMs = config.SMTP_MX_SPOOL_TTL_MS;
  await ensureUploadBucket(connection, INBOUND_SPOOL_BUCKET, ttlMs);
  const returnPathHosts = new ReturnPathHosts(bus, RETURN_PATH_HOSTS_CACHED);
  const routes = new RouteSets(
    bus,
    config.scaled(config.SMTP_MX_ROUTE_CACHE_TTL_MS),
    ROUTE_SETS_CACHED,
  );
  const onBroadcastError = (error: unknown) => logger.warn({ err: error }, 'broadcast not handled');
  subscribeBroadcast(
    connection,
    DomainsSubjects.domainChanged,
    (event) => {
      returnPathHosts.forget(event.domain);
      routes.forget(event.domain);
    },
    onBroadcastError,
  );
  // A deleted domain's owners change: its route set goes (its routes go with a later event).
  subscribeBroadcast(
    connection,
    DomainsSubjects.domainDeleted,
    (event) => routes.forget(event.domain),
    onBroadcastError,
  );
  subscribeBroadcast(
    connection,
    RoutesSubjects.matchChanged,
    (event) => routes.forget(event.domain),
    onBroadcastError,
  );
  // The broadcasts must be in place before the first session relies on a cached route set.
  await connection.flush();
  const session = new MxSession({
    routes,
    returnPathHosts,
    spool: new InboundSpool(connection, ttlMs, config.RPC_TIMEOUT_MS),
    mailboxes: {
      bounceDomain: config.mxBounceDomain(),
      feedbackAddress: config.mxFeedbackAddress(),
    },
    limits: {
      maxMessageBytes: config.SMTP_MX_MAX_MESSAGE_BYTES,
      maxLineOctets: MX_MAX_LINE_OCTETS,
      publishAttempts: PUBLISH_ATTEMPTS,
      content: mxContentLimits(config.SMTP_MX_MAX_MESSAGE_BYTES),
    },
  });
  const server = new MxServer(
    {
      hostname: config.SMTP_HOSTNAME,
      tls,
      maxMessageBytes: config.SMTP_MX_MAX_MESSAGE_BYTES,
      maxRecipients: MX_MAX_RECIPIENTS,
      idleTimeoutMs: config.scaled(config.SMTP_IDLE_TIMEOUT_MS),
      maxConnections: config.SMTP_MAX_CONNECTIONS,
      maxConnectionsPerIp: config.SMTP_MAX_CONNECTIONS_PER_IP,
      drainMs: config.SHUTDOWN_GRACE_MS,
    },
    session,
    logger,
  );
  await server.listen(config.SMTP_HOST, config.SMTP_MX_PORT);
  return server;
}
