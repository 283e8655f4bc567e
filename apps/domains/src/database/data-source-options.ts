import path from 'node:path';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import { OutboxMessageEntity } from '@envoi/shared-outbox';
import type { DataSourceOptions } from 'typeorm';

import { DomainEntity } from '../domains/domain.entity';

export const DOMAINS_SCHEMA = 'domains';

export const DOMAINS_ENTITIES = [DomainEntity, OutboxMessageEntity];

/**
 * Migrations are picked up from their folder: `.ts` under jest, `.js` once compiled into dist/.
 * Only `<epoch>-<PascalName>` files match, never source maps.
 */
const MIGRATIONS = path.join(__dirname, 'migrations', '[0-9]*-*.{ts,js}');

/** The domains schema's DataSource options, shared by the app, the migration job and the CLI. */
export function domainsDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url,
    schema: DOMAINS_SCHEMA,
    entities: DOMAINS_ENTITIES,
    migrations: [MIGRATIONS],
    ...(poolSize === undefined ? {} : { poolSize }),
  });
}
