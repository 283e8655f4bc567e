import { ServiceEnv } from '@envoi/shared-config';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';

export const SERVICE_NAME = 'suppressions';

const DAY_MS = 86_400_000;

/** The suppressions service's environment, validated once at boot. */
export class SuppressionsConfig extends ServiceEnv {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) DATABASE_POOL_SIZE: number = 10;

  /** See the accounts service: leave the queue group, then let in-flight handlers finish. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(60_000) SHUTDOWN_GRACE_MS: number = 3_000;

  /** Lifetime of an automatic suppression (hard bounce, repeated failures) given no expiry. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(3_650 * DAY_MS)
  SUPPRESSION_AUTOMATIC_TTL_MS: number = 30 * DAY_MS;

  /** How often a replica deletes expired suppressions, and how many rows per statement. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(DAY_MS)
  SUPPRESSION_PURGE_INTERVAL_MS: number = 600_000;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10_000) SUPPRESSION_PURGE_BATCH: number =
    1_000;

  /** Delivery events (bounces, failures) pulled at once from the EVENTS stream, per consumer. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(256) EVENTS_BATCH: number = 32;

  /** An event not acknowledged this long after delivery is delivered again. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1_000)
  @Max(600_000)
  EVENTS_ACK_WAIT_MS: number = 30_000;

  /** First redelivery delay of an event whose handling failed; it doubles, up to one minute. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(60_000)
  EVENTS_RETRY_MS: number = 1_000;

  /**
   * How long handled event ids are remembered: longer than the EVENTS stream keeps events
   * (7 days), so that no redelivery or replay outlives its record.
   */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(60_000)
  @Max(90 * DAY_MS)
  PROCESSED_EVENTS_RETENTION_MS: number = 8 * DAY_MS;

  /** Outbox relay: pause between idle runs, and events per transaction. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(10)
  @Max(60_000)
  OUTBOX_RELAY_INTERVAL_MS: number = 1_000;
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(1_000) OUTBOX_RELAY_BATCH: number = 100;
}

/** What a migration run needs: the database and nothing else (no bus). */
export class MigrationConfig {
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;
}
