import { runMigrations } from '@envoi/shared-database';

import { domainsDataSourceOptions } from './data-source-options';

/** Applies the domains schema's pending migrations; returns their names. */
export function runDomainsMigrations(url: string): Promise<string[]> {
  return runMigrations(domainsDataSourceOptions(url, 2));
}
