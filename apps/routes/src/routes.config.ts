import {
  IntSetting,
  OutboundAllowCidrs,
  OutboundAllowHttp,
  OutboxEventConsumerServiceEnv,
} from '@envoi/shared-config';
import { IsString, Matches } from 'class-validator';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'routes';

const DAY_MS = 86_400_000;

/**
 * The routes service's environment, validated once at boot: the database, the bus, health,
 * the outbox relay (OUTBOX_*) and the EVENTS consumers (EVENTS_*), and its own settings.
 */
export class RoutesConfig extends OutboxEventConsumerServiceEnv {
  /** AES-256-GCM key (64 hex characters) that encrypts the routes' signing secrets at rest. */
  @IsString()
  @Matches(/^[0-9a-fA-F]{64}$/, {
    message: 'ROUTE_SECRET_ENCRYPTION_KEY must be 64 hexadecimal characters',
  })
  ROUTE_SECRET_ENCRYPTION_KEY!: string;

  /** Route URLs may use plain http:// (the local platform sets it; production denies it). */
  @OutboundAllowHttp() OUTBOUND_ALLOW_HTTP: boolean = false;

  /** CIDRs route URLs may reach although private or loopback; empty in production. */
  @OutboundAllowCidrs() OUTBOUND_ALLOW_CIDRS: string = '';

  /**
   * How long a replica keeps which accounts own a domain name (asked at every RCPT); dropped at
   * once when the domains service broadcasts a change of the domain.
   */
  @IntSetting(0, 3_600_000) ROUTES_DOMAIN_CACHE_TTL_MS: number = 10_000;

  /** A call to a route URL that has not answered with a 2xx within this fails. */
  @IntSetting(100, 120_000) ROUTE_TIMEOUT_MS: number = 10_000;
  /** Calls per delivery in all, the first included (notes 2.8: 10 retries). */
  @IntSetting(1, 30) ROUTE_MAX_ATTEMPTS: number = 11;
  /** The retry after the n-th failure waits n^4 times this (±10 %): 1 s … 10000 s by default. */
  @IntSetting(1, 60_000) ROUTE_RETRY_BASE_MS: number = 1_000;
  /** Consecutive failed calls after which a route is disabled. */
  @IntSetting(1, 100_000) ROUTE_DISABLE_AFTER_FAILURES: number = 100;
  /** How often a replica looks for due deliveries, and how many calls it has in flight at most. */
  @IntSetting(10, 60_000) ROUTE_POLL_INTERVAL_MS: number = 200;
  @IntSetting(1, 1_000) ROUTE_CLAIM_BATCH: number = 16;
  /** Calls in flight to one route at most, every replica counted: a slow route holds no more. */
  @IntSetting(1, 100) ROUTE_ENDPOINT_CONCURRENCY: number = 4;
  /**
   * How long the intake waits for the calls it makes straight from the stream before it stores
   * them (those still running leased, those not started due); 0: every call is stored first.
   */
  @IntSetting(0, 60_000) ROUTE_DIRECT_WAIT_MS: number = 500;
  /** Calls that end within this of each other are recorded in one transaction. */
  @IntSetting(0, 1_000) ROUTE_RECORD_WINDOW_MS: number = 0;
  /** How long a claimed delivery stays with its replica; must exceed ROUTE_TIMEOUT_MS. */
  @IntSetting(1_000, 600_000) ROUTE_LEASE_MS: number = 30_000;

  /**
   * How long after its receipt a routed message's spool is waited for: the MX stores the event
   * and the bytes at the same time, so the event may come first. Past this, a spool still missing
   * makes the event a dead letter.
   */
  @IntSetting(0, DAY_MS) ROUTE_SPOOL_WAIT_MS: number = 60_000;

  /** How often a replica deletes old routed messages, and how many per statement. */
  @IntSetting(50, DAY_MS) ROUTE_PURGE_INTERVAL_MS: number = 600_000;
  @IntSetting(1, 10_000) ROUTE_PURGE_BATCH: number = 100;
  /** A routed message (its bytes and calls) is kept this long once its calls are settled. */
  @IntSetting(60_000, 365 * DAY_MS) ROUTE_MESSAGE_RETENTION_MS: number = 7 * DAY_MS;

  /** A temporary stream route without a listener is purged after this long unused. */
  @IntSetting(1_000, 30 * DAY_MS) ROUTE_STREAM_TEMPORARY_TTL_MS: number = 3_600_000;
  /** Events a route's stream keeps for its listener; older ones are dropped. */
  @IntSetting(1, 100_000) ROUTE_STREAM_BUFFER_MAX: number = 1_000;
  /** A buffered stream event not written to a listener is dropped after this long. */
  @IntSetting(1_000, 30 * DAY_MS) ROUTE_STREAM_BUFFER_MAX_AGE_MS: number = DAY_MS;
}
