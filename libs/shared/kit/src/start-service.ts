import { cacheValidationMetadata } from '@envoi/contracts-core';
import { loadConfig, type MicroserviceEnv } from '@envoi/shared-config';
import { exitOnStartFailure, runService } from '@envoi/shared-nats';
import { createLogger } from '@envoi/shared-observability';
import type { DynamicModule } from '@nestjs/common';

/**
 * A service process's whole `main`: validates its environment into its config class (exiting with
 * the reasons when it is wrong), then runs the app module built from that config in the service's
 * queue group, with health endpoints and a graceful stop (see `runService`). class-validator
 * remembers the constraints it finds per class (cacheValidationMetadata).
 */
export function startService<Config extends MicroserviceEnv>(
  service: string,
  configClass: new () => Config,
  appModule: (config: Config) => DynamicModule,
): void {
  const start = async (): Promise<void> => {
    cacheValidationMetadata();
    const config = loadConfig(configClass);
    await runService({
      service,
      module: appModule(config),
      servers: config.natsServers(),
      logger: createLogger(service, config.LOG_LEVEL),
      gracePeriodMs: config.SHUTDOWN_GRACE_MS,
      health: config,
    });
  };
  start().catch(exitOnStartFailure(service));
}
