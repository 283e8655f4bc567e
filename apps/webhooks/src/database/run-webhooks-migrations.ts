import { runMigrations } from '@envoi/shared-database';

import { webhooksDataSourceOptions } from './data-source-options';

/** Applies the webhooks schema's pending migrations; returns their names. */
export function runWebhooksMigrations(url: string): Promise<string[]> {
  return runMigrations(webhooksDataSourceOptions(url, 2));
}
