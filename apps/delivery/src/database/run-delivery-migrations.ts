import { runMigrations } from '@envoi/shared-database';

import { deliveryDataSourceOptions } from './data-source-options';

/** Applies the delivery schema's pending migrations; returns their names. */
export function runDeliveryMigrations(url: string): Promise<string[]> {
  return runMigrations(deliveryDataSourceOptions(url, 2));
}
