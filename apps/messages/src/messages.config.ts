import { ServiceEnv } from '@envoi/shared-config';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';

export const SERVICE_NAME = 'messages';

const DAY_MS = 86_400_000;

/** The messages service's environment, validated once at boot. */
export class MessagesConfig extends ServiceEnv {
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(100) DATABASE_POOL_SIZE: number = 10;

  /** See the accounts service: leave the queue group, then let in-flight handlers finish. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(60_000) SHUTDOWN_GRACE_MS: number = 3_000;

  /** How long an account's tracking and retention defaults are reused without asking again. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(0) @Max(3_600_000) ACCOUNT_CACHE_TTL_MS: number =
    10_000;

  /** Longest a sender authorization is reused (the domains service's answer may say less). */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(3_600_000)
  SENDER_CACHE_MAX_TTL_MS: number = 60_000;

  /** Lifetime of upload and download objects in their buckets (taken ones are deleted at once). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1_000) @Max(DAY_MS) UPLOAD_TTL_MS: number =
    3_600_000;

  /** How often a replica purges message contents and metadata past their retention. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(50)
  @Max(DAY_MS)
  RETENTION_PURGE_INTERVAL_MS: number = 60_000;

  /** Rows per purge statement, and statements per run at most. */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(10_000) RETENTION_PURGE_BATCH: number =
    500;
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1_000)
  RETENTION_PURGE_MAX_BATCHES: number = 20;

  /** Delivery events (EVENTS stream) pulled at once by each of the status machine's consumers. */
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

  /** Outbox relay: pause between idle runs (also how late a scheduled job may be), rows per batch. */
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
