import path from 'node:path';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import type { DataSourceOptions } from 'typeorm';

import { IdempotencyRecordEntity } from '../idempotency/idempotency-record.entity';

export const GATEWAY_SCHEMA = 'gateway';

export const GATEWAY_ENTITIES = [IdempotencyRecordEntity];

/** `.ts` under jest, `.js` once compiled into dist/; only `<epoch>-<PascalName>` files. */
const MIGRATIONS = path.join(__dirname, 'migrations', '[0-9]*-*.{ts,js}');

/** The gateway schema's DataSource options, shared by the app, the migration job and the CLI. */
export function gatewayDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url,
    schema: GATEWAY_SCHEMA,
    entities: GATEWAY_ENTITIES,
    migrations: [MIGRATIONS],
    ...(poolSize === undefined ? {} : { poolSize }),
  });
}
