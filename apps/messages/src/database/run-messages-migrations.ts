import { runMigrations } from '@envoi/shared-database';

import { messagesDataSourceOptions } from './data-source-options';

/** Applies the messages schema's pending migrations; returns their names. */
export function runMessagesMigrations(url: string): Promise<string[]> {
  return runMigrations(messagesDataSourceOptions(url, 2));
}
