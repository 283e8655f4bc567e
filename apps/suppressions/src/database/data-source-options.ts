import path from 'node:path';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import { DeadLetterEntity, OutboxMessageEntity, ProcessedEventEntity } from '@envoi/shared-outbox';
import type { DataSourceOptions } from 'typeorm';

import { SuppressionEntity } from '../suppressions/suppression.entity';

export const SUPPRESSIONS_SCHEMA = 'suppressions';

export const SUPPRESSIONS_ENTITIES = [
  DeadLetterEntity,
  SuppressionEntity,
  ProcessedEventEntity,
  OutboxMessageEntity,
];

/**
 * Migrations are picked up from their folder: `.ts` under jest, `.js` once compiled into dist/.
 * Only `<epoch>-<PascalName>` files match, never source maps.
 */
const MIGRATIONS = path.join(__dirname, 'migrations', '[0-9]*-*.{ts,js}');

/** The suppressions schema's DataSource options, shared by the app, the migration job and the CLI. */
export function suppressionsDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url,
    schema: SUPPRESSIONS_SCHEMA,
    entities: SUPPRESSIONS_ENTITIES,
    migrations: [MIGRATIONS],
    ...(poolSize === undefined ? {} : { poolSize }),
  });
}
