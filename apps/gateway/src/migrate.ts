import 'reflect-metadata';

import { loadConfig, MigrationEnv } from '@envoi/shared-config';
import { createLogger } from '@envoi/shared-observability';

import { runGatewayMigrations } from './database/run-gateway-migrations';
import { SERVICE_NAME } from './gateway.config';

/** The migration job: applies pending migrations of the gateway schema, then exits. */
async function main(): Promise<void> {
  const logger = createLogger(`${SERVICE_NAME}-migrate`);
  try {
    const config = loadConfig(MigrationEnv);
    const applied = await runGatewayMigrations(config.DATABASE_URL);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
  } catch (error) {
    logger.fatal({ err: error }, 'migration failed');
    process.exitCode = 1;
  }
}

void main();
