import { runMigrations } from '@envoi/shared-database';

import { accountsDataSourceOptions } from './data-source-options';

/** Applies the accounts schema's pending migrations; returns their names. */
export function runAccountsMigrations(url: string): Promise<string[]> {
  return runMigrations(accountsDataSourceOptions(url, 2));
}
