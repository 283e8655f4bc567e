import { runMigrations } from '@envoi/shared-database';

import { suppressionsDataSourceOptions } from './data-source-options';

/** Applies the suppressions schema's pending migrations; returns their names. */
export function runSuppressionsMigrations(url: string): Promise<string[]> {
  return runMigrations(suppressionsDataSourceOptions(url, 2));
}
