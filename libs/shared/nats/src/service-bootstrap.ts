import { type HealthSettings, startHealthServer } from '@envoi/shared-health';
import {
  announceReady,
  createLogger,
  type Logger,
  NestPinoLogger,
} from '@envoi/shared-observability';
import type { DynamicModule, INestMicroservice, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

import { NATS_CONNECTION } from './nats.module';
import { serviceReadiness } from './service-health';
import { configureServiceTransport, natsMicroserviceOptions } from './service-transport';

export interface ServiceBootstrapOptions {
  service: string;
  module: Type<unknown> | DynamicModule;
  servers: string[];
  logger: Logger;
  /**
   * The most in-flight handlers may take to reply once the service stops taking new requests; an
   * idle service closes at once.
   */
  gracePeriodMs: number;
  /** Where `/healthz` and `/readyz` are served (readiness checks the service's DataSource). */
  health: HealthSettings;
}

/**
 * Starts a service as a NATS microservice in its queue group, then its health endpoints, and stops
 * it cleanly on SIGTERM or SIGINT: it reports itself not ready first, leaves the queue group, lets
 * in-flight handlers reply (waiting no longer than they take, at most `gracePeriodMs`), then
 * closes its resources (the database pool last). enableShutdownHooks() would close resources
 * first.
 */
export async function runService(options: ServiceBootstrapOptions): Promise<INestMicroservice> {
  const { logger } = options;
  const app = await NestFactory.createMicroservice(options.module, {
    ...natsMicroserviceOptions(options.service, options.servers, options.gracePeriodMs),
    logger: new NestPinoLogger(logger),
  });
  configureServiceTransport(app, logger);
  const dataSource = app.get(DataSource);
  const readiness = serviceReadiness({
    connection: app.get<symbol, NatsConnection>(NATS_CONNECTION),
    query: (sql) => dataSource.query(sql),
  });
  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    readiness.markStopping();
    app.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  await app.listen();
  // Served once the stream consumers have started (in onApplicationBootstrap, during listen()).
  const health = await startHealthServer({
    host: options.health.HEALTH_HOST,
    port: options.health.HEALTH_PORT,
    readiness,
  });
  announceReady(logger, { health: { host: options.health.HEALTH_HOST, port: health.port } });
  return app;
}

/** For a service's main.ts: a start failure is logged and ends the process. */
export function exitOnStartFailure(service: string) {
  return (error: unknown): never => {
    createLogger(service).fatal({ err: error }, `${service} failed to start`);
    process.exit(1);
  };
}
