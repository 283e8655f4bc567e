import { runMigrations } from '@envoi/shared-database';

import { routesDataSourceOptions } from './data-source-options';

/** Applies the routes schema's pending migrations; returns their names. */
export function runRoutesMigrations(url: string): Promise<string[]> {
  return runMigrations(routesDataSourceOptions(url, 2));
}
