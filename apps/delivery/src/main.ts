import 'reflect-metadata';

import { loadConfig } from '@envoi/shared-config';
import { exitOnStartFailure, runService } from '@envoi/shared-nats';
import { createLogger } from '@envoi/shared-observability';

import { AppModule } from './app.module';
import { DeliveryConfig, SERVICE_NAME } from './delivery.config';

async function bootstrap(): Promise<void> {
  const config = loadConfig(DeliveryConfig);
  await runService({
    service: SERVICE_NAME,
    module: AppModule.forRoot(config),
    servers: config.natsServers(),
    logger: createLogger(SERVICE_NAME, config.LOG_LEVEL),
    // No request handlers to drain (the transport would only sleep through its grace period
    // before the worker's own shutdown runs); the worker gives its SMTP sessions in flight
    // SHUTDOWN_GRACE_MS, then hands the rest back to the queue.
    gracePeriodMs: 0,
  });
}

bootstrap().catch(exitOnStartFailure(SERVICE_NAME));
