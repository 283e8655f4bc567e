import { NatsModule } from '@envoi/shared-nats';
import {
  DEFAULT_OUTBOX_RELAY_OPTIONS,
  eventsStreamDefinition,
  OutboxModule,
} from '@envoi/shared-outbox';
import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';

import { domainsDataSourceOptions } from './database/data-source-options';
import { DomainsConfig, SERVICE_NAME } from './domains.config';
import { DomainsModule } from './domains/domains.module';

/** The domains service: sending domains, DKIM keys, DNS verification; PostgreSQL schema "domains". */
@Module({})
export class AppModule {
  static forRoot(config: DomainsConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...domainsDataSourceOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
          // Fail the boot quickly rather than retrying for minutes; the orchestrator restarts us.
          retryAttempts: 3,
          retryDelay: 1_000,
        }),
        NatsModule.forRoot({ servers: config.natsServers(), name: SERVICE_NAME }),
        OutboxModule.forRoot({
          ...DEFAULT_OUTBOX_RELAY_OPTIONS,
          stream: eventsStreamDefinition(),
          intervalMs: config.OUTBOX_RELAY_INTERVAL_MS,
          batchSize: config.OUTBOX_RELAY_BATCH,
        }),
        DomainsModule,
      ],
      providers: [{ provide: DomainsConfig, useValue: config }],
      exports: [DomainsConfig],
    };
  }
}
