import 'reflect-metadata';

import { loadConfig } from '@envoi/shared-config';
import { DataSource } from 'typeorm';

import { MigrationConfig } from '../routes.config';
import { routesDataSourceOptions } from './data-source-options';

/** For the typeorm CLI only (migration:generate, migration:revert); the app builds its own. */
export const dataSource = new DataSource(
  routesDataSourceOptions(loadConfig(MigrationConfig).DATABASE_URL),
);
