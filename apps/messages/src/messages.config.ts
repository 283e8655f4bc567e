import { IntSetting, OutboxEventConsumerServiceEnv } from '@envoi/shared-config';
import { IsString, IsUrl, MinLength } from 'class-validator';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'messages';

const DAY_MS = 86_400_000;

/**
 * The messages service's environment, validated once at boot. Its durable events are the delivery
 * events (EVENTS_*), pulled by each of the status machine's consumers; its outbox relay also
 * publishes the delivery jobs, so OUTBOX_RELAY_INTERVAL_MS is also how late a scheduled job may be.
 */
export class MessagesConfig extends OutboxEventConsumerServiceEnv {
  /**
   * Where tracking pixels and tracked links point: the gateway's public base URL (the tracking
   * routes `/t/o/…` and `/t/c/…` are served there), e.g. `https://mail.example.com`.
   */
  @IsUrl({ protocols: ['https', 'http'], require_tld: false, require_protocol: true })
  TRACKING_BASE_URL!: string;

  /** Signs tracking tokens (HMAC-SHA256); at least 32 characters. Changing it voids sent links. */
  @IsString() @MinLength(32) TRACKING_SECRET!: string;

  /** Open and click events published per message, each (counters go on counting past it). */
  @IntSetting(0, 10_000) TRACKING_EVENTS_PER_MESSAGE: number = 50;

  /** How long an account's tracking and retention defaults are reused without asking again. */
  @IntSetting(0, 3_600_000) ACCOUNT_CACHE_TTL_MS: number = 10_000;

  /**
   * How long an account's suppressions, read whole, answer its sends' suppression checks; a change
   * drops them at once (the suppressions service broadcasts it). 0: every send asks.
   */
  @IntSetting(0, 3_600_000) SUPPRESSION_CACHE_TTL_MS: number = 10_000;

  /**
   * An account with more unexpired suppressions than this is asked about each send instead (the
   * snapshots of up to 1 000 accounts are kept per replica).
   */
  @IntSetting(0, 1_000) SUPPRESSION_CACHE_MAX_PER_ACCOUNT: number = 200;

  /** Longest a sender authorization is reused (the domains service's answer may say less). */
  @IntSetting(0, 3_600_000) SENDER_CACHE_MAX_TTL_MS: number = 60_000;

  /** Lifetime of upload and download objects in their buckets (taken ones are deleted at once). */
  @IntSetting(1_000, DAY_MS) UPLOAD_TTL_MS: number = 3_600_000;

  /** How often a replica purges message contents and metadata past their retention. */
  @IntSetting(50, DAY_MS) RETENTION_PURGE_INTERVAL_MS: number = 60_000;

  /**
   * How long a send committed under an `Idempotency-Key` answers a retry with its reply: the
   * gateway's replay lifetime (IDEMPOTENCY_TTL_MS, 24 h); older ones are purged with retention.
   */
  @IntSetting(60_000, 7 * DAY_MS) IDEMPOTENCY_TTL_MS: number = DAY_MS;

  /** Rows per purge statement, and statements per run at most. */
  @IntSetting(1, 10_000) RETENTION_PURGE_BATCH: number = 500;
  @IntSetting(1, 1_000) RETENTION_PURGE_MAX_BATCHES: number = 20;
}
