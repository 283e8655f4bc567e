import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Pool, type QueryResult, type QueryResultRow } from 'pg';

import { GatewayConfig } from '../gateway.config';
import { LOGGER } from '../logger.provider';

/**
 * The gateway's PostgreSQL pool (schema "gateway"). Its hot statement, the idempotency claim, is
 * a single atomic SQL statement, so it talks to pg directly.
 */
@Injectable()
export class GatewayDatabase implements OnApplicationShutdown {
  private readonly pool: Pool;

  constructor(config: GatewayConfig, @Inject(LOGGER) logger: Logger) {
    this.pool = new Pool({
      connectionString: config.DATABASE_URL,
      max: config.DATABASE_POOL_SIZE,
      connectionTimeoutMillis: 5_000,
      application_name: 'gateway',
    });
    // An idle client losing its connection must not crash the process; the next query reconnects.
    this.pool.on('error', (error) => logger.warn({ err: error }, 'idle database client failed'));
  }

  query<Row extends QueryResultRow>(text: string, values: unknown[]): Promise<QueryResult<Row>> {
    return this.pool.query<Row>(text, values);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
