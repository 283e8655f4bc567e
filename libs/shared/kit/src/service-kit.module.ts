import type { StreamSubject } from '@envoi/contracts-core';
import type { MicroserviceEnv } from '@envoi/shared-config';
import { PeriodicJobsModule } from '@envoi/shared-jobs';
import { NatsModule, StreamConsumersModule } from '@envoi/shared-nats';
import {
  DeadLetterRepository,
  DEFAULT_OUTBOX_RELAY_OPTIONS,
  eventsStreamDefinition,
  OutboxModule,
  type StreamDefinition,
} from '@envoi/shared-outbox';
import { type DynamicModule, Module, type Provider, type Type } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSourceOptions } from 'typeorm';

/** The outbox relay's settings, in a service env class that publishes through an outbox. */
export interface OutboxSettings {
  OUTBOX_RELAY_INTERVAL_MS: number;
  OUTBOX_RELAY_BATCH: number;
}

export interface ServiceKitOptions<Config extends MicroserviceEnv> {
  /** The service's name: its NATS queue group, connection name and dead-letter label. */
  service: string;
  /** The validated configuration, injectable everywhere under its class. */
  config: Config;
  /** The service schema's DataSource options (the same function its migrations use). */
  dataSource: (url: string, poolSize?: number) => DataSourceOptions;
  /** How long a request to another service waits for its reply; the bus default otherwise. */
  rpcTimeoutMs?: number;
  /**
   * Publishes through an outbox: events to the EVENTS stream, and rows to these other streams
   * (a work queue); the relay's pace comes from the config's OUTBOX_* settings, and how long
   * after a run a notify() may start the next from `wakeDelayMs` (the relay's default otherwise).
   */
  outbox?: {
    settings: OutboxSettings;
    streams?: readonly StreamDefinition[];
    wakeDelayMs?: number;
  };
  /** The durable stream subjects this service consumes; each needs one declared handler. */
  consumes?: readonly StreamSubject<unknown>[];
}

/**
 * What every service process is built on: its config, its schema's DataSource, the bus, and,
 * where declared, the outbox relay, the durable stream consumers and the periodic jobs. An app module imports it
 * beside its feature modules.
 */
@Module({})
export class ServiceKitModule {
  static forRoot<Config extends MicroserviceEnv>(
    options: ServiceKitOptions<Config>,
  ): DynamicModule {
    const { service, config, outbox, consumes } = options;
    const configClass = config.constructor as Type<Config>;
    const configProvider: Provider = { provide: configClass, useValue: config };
    return {
      module: ServiceKitModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...options.dataSource(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
          // Fail the boot quickly rather than retrying for minutes; the orchestrator restarts us.
          retryAttempts: 3,
          retryDelay: 1_000,
        }),
        NatsModule.forRoot({
          servers: config.natsServers(),
          name: service,
          ...(options.rpcTimeoutMs === undefined ? {} : { rpcTimeoutMs: options.rpcTimeoutMs }),
        }),
        ...(outbox
          ? [
              OutboxModule.forRoot({
                ...DEFAULT_OUTBOX_RELAY_OPTIONS,
                stream: eventsStreamDefinition(),
                ...(outbox.streams ? { streams: outbox.streams } : {}),
                intervalMs: outbox.settings.OUTBOX_RELAY_INTERVAL_MS,
                batchSize: outbox.settings.OUTBOX_RELAY_BATCH,
                ...(outbox.wakeDelayMs === undefined ? {} : { wakeDelayMs: outbox.wakeDelayMs }),
              }),
            ]
          : []),
        ...(consumes
          ? [
              StreamConsumersModule.forRoot({
                consumes,
                settings: configClass,
                service,
                deadLetters: DeadLetterRepository,
              }),
            ]
          : []),
        PeriodicJobsModule.forRoot({ settings: configClass }),
      ],
      providers: [configProvider],
      exports: [configProvider],
    };
  }
}
