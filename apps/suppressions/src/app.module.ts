import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { NatsModule, StreamConsumersModule } from '@envoi/shared-nats';
import {
  DeadLetterRepository,
  DEFAULT_OUTBOX_RELAY_OPTIONS,
  eventsStreamDefinition,
  OutboxModule,
} from '@envoi/shared-outbox';
import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';

import { suppressionsDataSourceOptions } from './database/data-source-options';
import { SERVICE_NAME, SuppressionsConfig } from './suppressions.config';
import { SuppressionsModule } from './suppressions/suppressions.module';

/** The suppressions service: the suppression list and send-time checks; schema "suppressions". */
@Module({})
export class AppModule {
  static forRoot(config: SuppressionsConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...suppressionsDataSourceOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
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
        StreamConsumersModule.forRoot({
          consumes: [
            DeliveryStreamSubjects.bounced,
            DeliveryStreamSubjects.failed,
            DeliveryStreamSubjects.delivered,
            DeliveryStreamSubjects.transientError,
          ],
          settings: SuppressionsConfig,
          service: SERVICE_NAME,
          deadLetters: DeadLetterRepository,
        }),
        SuppressionsModule,
      ],
      providers: [{ provide: SuppressionsConfig, useValue: config }],
      exports: [SuppressionsConfig],
    };
  }
}
