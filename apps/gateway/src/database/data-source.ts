import 'reflect-metadata';

import { loadConfig, MigrationEnv } from '@envoi/shared-config';
import { DataSource } from 'typeorm';

import { gatewayDataSourceOptions } from './data-source-options';

/** For the typeorm CLI only (migration:generate, migration:revert); the app builds its own. */
export const dataSource = new DataSource(
  gatewayDataSourceOptions(loadConfig(MigrationEnv).DATABASE_URL),
);
