import 'reflect-metadata';

import { loadConfig } from '@envoi/shared-config';
import { exitOnStartFailure, runService } from '@envoi/shared-nats';
import { createLogger } from '@envoi/shared-observability';

import { AccountsConfig, SERVICE_NAME } from './accounts.config';
import { AppModule } from './app.module';

async function bootstrap(): Promise<void> {
  const config = loadConfig(AccountsConfig);
  await runService({
    service: SERVICE_NAME,
    module: AppModule.forRoot(config),
    servers: config.natsServers(),
    logger: createLogger(SERVICE_NAME, config.LOG_LEVEL),
    gracePeriodMs: config.SHUTDOWN_GRACE_MS,
    health: config,
  });
}

bootstrap().catch(exitOnStartFailure(SERVICE_NAME));
