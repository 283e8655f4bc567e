import { IntSetting, OutboxEventConsumerServiceEnv } from '@envoi/shared-config';

export { MigrationEnv as MigrationConfig } from '@envoi/shared-config';

export const SERVICE_NAME = 'suppressions';

const DAY_MS = 86_400_000;

/**
 * The suppressions service's environment, validated once at boot. Its durable events are the
 * delivery events (bounces, failures; EVENTS_*).
 */
export class SuppressionsConfig extends OutboxEventConsumerServiceEnv {
  /** Lifetime of an automatic suppression (hard bounce, repeated failures) given no expiry. */
  @IntSetting(1_000, 3_650 * DAY_MS) SUPPRESSION_AUTOMATIC_TTL_MS: number = 30 * DAY_MS;

  /** How often a replica deletes expired suppressions, and how many rows per statement. */
  @IntSetting(50, DAY_MS) SUPPRESSION_PURGE_INTERVAL_MS: number = 600_000;
  @IntSetting(1, 10_000) SUPPRESSION_PURGE_BATCH: number = 1_000;

  /**
   * How long handled event ids are remembered: longer than the EVENTS stream keeps events
   * (7 days), so that no redelivery or replay outlives its record.
   */
  @IntSetting(60_000, 90 * DAY_MS) PROCESSED_EVENTS_RETENTION_MS: number = 8 * DAY_MS;
}
