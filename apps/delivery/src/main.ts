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
    // The transport waits only for bus handlers in flight (delivery has none today), then the
    // worker's own shutdown gives its SMTP sessions in flight SHUTDOWN_GRACE_MS and hands the
    // rest back to the queue.
    gracePeriodMs: config.SHUTDOWN_GRACE_MS,
    health: config,
  });
}

bootstrap().catch(exitOnStartFailure(SERVICE_NAME));
