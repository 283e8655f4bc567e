import type { DataSourceOptions, MixedList } from 'typeorm';

import { SnakeNamingStrategy } from './snake-naming.strategy';

export interface ServiceDatabaseOptions {
  url: string;
  /** The service's own schema; no service reads another's. */
  schema: string;
  entities: MixedList<string | (new () => unknown)>;
  migrations: MixedList<string | (new () => unknown)>;
  poolSize?: number;
}

/** The same shape for every service: own schema, own migrations table, synchronize off. */
export function serviceDataSourceOptions(options: ServiceDatabaseOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url: options.url,
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    migrationsTableName: 'migrations',
    migrationsRun: false,
    synchronize: false,
    namingStrategy: new SnakeNamingStrategy(),
    extra: {
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5_000,
      application_name: options.schema,
    },
  };
}
