import { DomainsClientModule } from '@envoi/clients-domains';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { NatsModule, StreamConsumersModule } from '@envoi/shared-nats';
import {
  DeadLetterRepository,
  DEFAULT_OUTBOX_RELAY_OPTIONS,
  deliveryStreamDefinition,
  eventsStreamDefinition,
  OutboxModule,
} from '@envoi/shared-outbox';
import { type DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';

import { deliveryDataSourceOptions } from './database/data-source-options';
import { DeliveryConfig, SERVICE_NAME } from './delivery.config';
import { DeliveryModule } from './worker/delivery.module';

/**
 * The delivery service: workers that take due jobs from the DELIVERY work queue and deliver over
 * SMTP; PostgreSQL schema "delivery" (the attempts log); outcome events and retry jobs leave
 * through its outbox.
 */
@Module({})
export class AppModule {
  static forRoot(config: DeliveryConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...deliveryDataSourceOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
          // Fail the boot quickly rather than retrying for minutes; the orchestrator restarts us.
          retryAttempts: 3,
          retryDelay: 1_000,
        }),
        NatsModule.forRoot({
          servers: config.natsServers(),
          name: SERVICE_NAME,
          rpcTimeoutMs: config.RPC_TIMEOUT_MS,
        }),
        DomainsClientModule.forRoot({ senderCacheMaxTtlMs: config.SENDER_CACHE_MAX_TTL_MS }),
        OutboxModule.forRoot({
          ...DEFAULT_OUTBOX_RELAY_OPTIONS,
          stream: eventsStreamDefinition(),
          streams: [deliveryStreamDefinition()],
          intervalMs: config.OUTBOX_RELAY_INTERVAL_MS,
          batchSize: config.OUTBOX_RELAY_BATCH,
        }),
        StreamConsumersModule.forRoot({
          consumes: [MessagesStreamSubjects.deliveryJobs],
          settings: DeliveryConfig,
          service: SERVICE_NAME,
          deadLetters: DeadLetterRepository,
        }),
        DeliveryModule,
      ],
      providers: [{ provide: DeliveryConfig, useValue: config }],
      exports: [DeliveryConfig],
    };
  }
}
