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
}

/** What a migration run needs: the database and nothing else (no bus). */
export class MigrationConfig {
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;
}
