import { Injectable } from '@nestjs/common';

import { GatewayDatabase } from './gateway-database';

/** The readiness probe's statement, run through the gateway's own pool. */
@Injectable()
export class HealthRepository {
  constructor(private readonly database: GatewayDatabase) {}

  async probe(sql: string): Promise<void> {
    await this.database.query(sql, []);
  }
}
