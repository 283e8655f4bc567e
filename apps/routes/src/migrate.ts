import 'reflect-metadata';

import { loadConfig } from '@envoi/shared-config';
import { createLogger } from '@envoi/shared-observability';

import { runRoutesMigrations } from './database/run-routes-migrations';
import { MigrationConfig, SERVICE_NAME } from './routes.config';

/** The migration job: applies pending migrations of the routes schema, then exits. */
async function main(): Promise<void> {
  const logger = createLogger(`${SERVICE_NAME}-migrate`);
  try {
    const config = loadConfig(MigrationConfig);
    const applied = await runRoutesMigrations(config.DATABASE_URL);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
  } catch (error) {
    logger.fatal({ err: error }, 'migration failed');
    process.exitCode = 1;
  }
}

void main();
