import {
  IntSetting,
  OutboundAllowCidrs,
  OutboundAllowHttp,
  OutboxEventConsumerServiceEnv,
} from '@envoi/shared-config';
import { IsString, Matches } from 'class-validator';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'webhooks';

const DAY_MS = 86_400_000;

/**
 * The webhooks service's environment, validated once at boot: the database, the bus, health,
 * the outbox relay (OUTBOX_*) and the EVENTS consumers (EVENTS_*), and its own settings.
 */
export class WebhooksConfig extends OutboxEventConsumerServiceEnv {
  /** AES-256-GCM key (64 hex characters) that encrypts the webhooks' signing secrets at rest. */
  @IsString()
  @Matches(/^[0-9a-fA-F]{64}$/, {
    message: 'WEBHOOK_SECRET_ENCRYPTION_KEY must be 64 hexadecimal characters',
  })
  WEBHOOK_SECRET_ENCRYPTION_KEY!: string;

  /** Endpoints may use plain http:// (the local platform sets it; production denies it). */
  @OutboundAllowHttp() OUTBOUND_ALLOW_HTTP: boolean = false;

  /** CIDRs endpoints may reach although private or loopback; empty in production. */
  @OutboundAllowCidrs() OUTBOUND_ALLOW_CIDRS: string = '';

  /** A call that has not answered with a 2xx within this fails. */
  @IntSetting(100, 120_000) WEBHOOK_TIMEOUT_MS: number = 10_000;
  /** Attempts per delivery in all, the first included; then it is given up. */
  @IntSetting(1, 20) WEBHOOK_MAX_ATTEMPTS: number = 6;
  /** The retry after the n-th failure waits n^4 times this (±10 %). */
  @IntSetting(1, 60_000) WEBHOOK_RETRY_BASE_MS: number = 1_000;
  /** Consecutive failed calls after which an endpoint is disabled. */
  @IntSetting(1, 100_000) WEBHOOK_DISABLE_AFTER_FAILURES: number = 100;
  /**
   * Calls in flight to one endpoint at most (1 while its calls fail): over every replica for
   * stored deliveries, per replica for first attempts made from the stream.
   */
  @IntSetting(1, 100) WEBHOOK_ENDPOINT_CONCURRENCY: number = 4;
  /** Calls in flight in one replica at most. */
  @IntSetting(1, 10_000) WEBHOOK_CONCURRENCY: number = 64;
  /** Attempts that end within this of each other are recorded in one transaction. */
  @IntSetting(0, 1_000) WEBHOOK_RECORD_WINDOW_MS: number = 5;
  /** How often a replica looks for due deliveries. */
  @IntSetting(10, 60_000) WEBHOOK_POLL_INTERVAL_MS: number = 200;
  /**
   * How long a claimed delivery stays with its replica; a crashed replica's deliveries go to
   * another after this. Must exceed WEBHOOK_TIMEOUT_MS.
   */
  @IntSetting(1_000, 600_000) WEBHOOK_LEASE_MS: number = 30_000;
  /**
   * An event's first attempts are made straight from the stream: its batch waits this long for
   * them before the calls still running or waiting become deliveries leased (or due) in the
   * database, and it is acknowledged. An endpoint with such calls, or failing, gets its events
   * through the database until they end.
   */
  @IntSetting(10, 60_000) WEBHOOK_DIRECT_WAIT_MS: number = 1_000;
  /** Batches of events each EVENTS consumer fans out at once (their calls overlap). */
  @IntSetting(1, 64) WEBHOOK_FAN_OUT_CONCURRENCY: number = 4;
  /** How long a replica keeps an account's webhooks (changes made through it drop them at once). */
  @IntSetting(0, 3_600_000) WEBHOOK_SUBSCRIPTION_CACHE_TTL_MS: number = 10_000;

  /** How often a replica deletes old deliveries and inbox entries, and how many per statement. */
  @IntSetting(50, DAY_MS) WEBHOOK_PURGE_INTERVAL_MS: number = 600_000;
  @IntSetting(1, 10_000) WEBHOOK_PURGE_BATCH: number = 1_000;
  /** Settled deliveries (and their attempts) are kept this long after their last attempt. */
  @IntSetting(60_000, 365 * DAY_MS) WEBHOOK_DELIVERY_RETENTION_MS: number = 30 * DAY_MS;

  /** A temporary stream webhook is deleted once it had no listener for this long. */
  @IntSetting(1_000, 30 * DAY_MS) WEBHOOK_STREAM_TEMPORARY_TTL_MS: number = 3_600_000;
  /** Events buffered per streamed webhook at most (the oldest go first). */
  @IntSetting(1, 100_000) WEBHOOK_STREAM_BUFFER_MAX: number = 1_000;
  /** A buffered event not written to a listener within this is dropped. */
  @IntSetting(1_000, 30 * DAY_MS) WEBHOOK_STREAM_BUFFER_MAX_AGE_MS: number = DAY_MS;
}
