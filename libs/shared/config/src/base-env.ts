import { IsIn, IsOptional, IsString, Matches } from 'class-validator';

import { IntSetting } from './setting-decorators';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Environment every process reads: the bus and the log level. */
export class BaseEnv {
  @IsString()
  @Matches(/^(nats|tls):\/\/[^,\s]+(,(nats|tls):\/\/[^,\s]+)*$/, {
    message: 'NATS_URL must be one or more nats:// URLs separated by commas',
  })
  NATS_URL!: string;

  @IsOptional()
  @IsIn(LOG_LEVELS)
  LOG_LEVEL: (typeof LOG_LEVELS)[number] = 'info';

  /** Multiplies every configured duration; tests compress time with values below 1. */
  @IsOptional()
  @Matches(/^[0-9]*\.?[0-9]+$/)
  TIME_SCALE: string = '1';

  natsServers(): string[] {
    return this.NATS_URL.split(',');
  }

  scaled(ms: number): number {
    return Math.max(1, Math.round(ms * Number(this.TIME_SCALE)));
  }
}

/** Environment of a service that owns a PostgreSQL schema. */
export class ServiceEnv extends BaseEnv {
  @IsString()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;

  /** Connections in this replica's PostgreSQL pool. */
  @IntSetting(1, 100) DATABASE_POOL_SIZE: number = 10;

  /** Port of the plain-HTTP `/healthz` and `/readyz` endpoints; 0 takes any free port (logged). */
  @IntSetting(0, 65535) HEALTH_PORT: number = 0;

  /** Address the health endpoints listen on. */
  @IsOptional() @IsString() HEALTH_HOST: string = '127.0.0.1';
}

/**
 * Environment of a service that serves a NATS queue group (every service but the gateway), and
 * drains it on shutdown.
 */
export class MicroserviceEnv extends ServiceEnv {
  /**
   * On SIGTERM the service leaves its queue group at once, then waits this long for in-flight
   * handlers to reply before it closes the bus connection and the database pool.
   */
  @IntSetting(0, 60_000) SHUTDOWN_GRACE_MS: number = 3_000;
}

/** What a migration run needs: the database and nothing else (no bus). */
export class MigrationEnv {
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL!: string;
}
