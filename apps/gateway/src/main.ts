import 'reflect-metadata';

import type { Server as TlsServer } from 'node:tls';

import { cacheValidationMetadata } from '@envoi/contracts-core';
import { loadConfig } from '@envoi/shared-config';
import { startHealthServer } from '@envoi/shared-health';
import { NATS_CONNECTION, serviceReadiness } from '@envoi/shared-nats';
import { announceReady, createLogger, NestPinoLogger } from '@envoi/shared-observability';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { NatsConnection } from 'nats';

import { AppModule } from './app.module';
import { Authenticator } from './auth/authenticator.service';
import { HealthRepository } from './database/health.repository';
import { GatewayConfig } from './gateway.config';
import { configureFastify } from './http/configure-fastify';
import { listenHttpsOnly } from './http/https-only-listener';
import { gatewayServerOptions, listenerLimits } from './http/server-options';
import { IdempotencyHooks } from './idempotency/idempotency.hooks';
import { RateLimiter } from './rate-limit/rate-limiter.service';
import { StreamListeners } from './stream/stream-listeners';

async function bootstrap(): Promise<void> {
  cacheValidationMetadata();
  const config = loadConfig(GatewayConfig);
  const logger = createLogger('gateway', config.LOG_LEVEL);
  const adapter = new FastifyAdapter(gatewayServerOptions(config));
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register(config, logger),
    adapter,
    // configureFastify installs the only body parser (JSON, keeping the raw bytes).
    { logger: new NestPinoLogger(logger), bodyParser: false },
  );
  configureFastify(app.getHttpAdapter().getInstance(), {
    authenticator: app.get(Authenticator),
    rateLimiter: app.get(RateLimiter),
    idempotency: app.get(IdempotencyHooks),
    unreadBodyDrainMs: config.HTTP_UNREAD_BODY_DRAIN_MS,
    accessLog: logger,
  });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  app.get(StreamListeners).install(app.getHttpServer());

  const listener = await listenHttpsOnly(
    app.getHttpServer() as unknown as TlsServer,
    config.HTTPS_PORT,
    config.HTTPS_HOST,
    listenerLimits(config),
  );
  const databaseHealth = app.get(HealthRepository);
  const readiness = serviceReadiness({
    connection: app.get<symbol, NatsConnection>(NATS_CONNECTION),
    query: (sql) => databaseHealth.probe(sql),
  });
  const health = await startHealthServer({
    host: config.HEALTH_HOST,
    port: config.HEALTH_PORT,
    readiness,
  });
  announceReady(logger, {
    host: config.HTTPS_HOST,
    port: config.HTTPS_PORT,
    health: { host: config.HEALTH_HOST, port: health.port },
  });

  // app.close() runs the shutdown hooks (flushing key usage, draining NATS) exactly once.
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    readiness.markStopping();
    listener.close();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
