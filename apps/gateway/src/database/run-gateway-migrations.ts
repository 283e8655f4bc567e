import { runMigrations } from '@envoi/shared-database';

import { gatewayDataSourceOptions } from './data-source-options';

/** Applies the gateway schema's pending migrations; returns their names. */
export function runGatewayMigrations(url: string): Promise<string[]> {
  return runMigrations(gatewayDataSourceOptions(url, 2));
}
