import 'reflect-metadata';

import { loadConfig } from '@envoi/shared-config';
import { exitOnStartFailure, runService } from '@envoi/shared-nats';
import { createLogger } from '@envoi/shared-observability';

import { AppModule } from './app.module';
import { DomainsConfig, SERVICE_NAME } from './domains.config';

async function bootstrap(): Promise<void> {
  const config = loadConfig(DomainsConfig);
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
