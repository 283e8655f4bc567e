import { ServiceEnv } from '@envoi/shared-config';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, Min } from 'class-validator';

export const SERVICE_NAME = 'accounts';

/** The accounts service's environment, validated once at boot. */
export class AccountsConfig extends ServiceEnv {
  /** Connections in this replica's PostgreSQL pool. */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  DATABASE_POOL_SIZE: number = 10;

  /**
   * On SIGTERM the service leaves its queue group at once, then waits this long for in-flight
   * handlers to reply before it closes the bus connection and the database pool.
   */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(60_000)
  SHUTDOWN_GRACE_MS: number = 3_000;

  /**
   * How long a key creation or update waits for the domains service to resolve the domains its
   * scopes name; well under the gateway's RPC timeout, so that a slow answer fails cleanly (503)
   * rather than committing after the gateway gave up.
   */
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(100)
  @Max(60_000)
  DOMAINS_RPC_TIMEOUT_MS: number = 5_000;

  /** Durable events (domain deletions) pulled at once from the EVENTS stream. */
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
}

/** What a migration run needs: the database and nothing else (no bus). */
export class MigrationConfig {
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;
}
