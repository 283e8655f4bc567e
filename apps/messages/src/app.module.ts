import { DomainsClientModule } from '@envoi/clients-domains';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { MESSAGE_DOWNLOADS_BUCKET, MESSAGE_UPLOADS_BUCKET } from '@envoi/contracts-messages';
import {
  ensureUploadBucket,
  NATS_CONNECTION,
  NatsModule,
  StreamConsumersModule,
} from '@envoi/shared-nats';
import {
  DeadLetterRepository,
  DEFAULT_OUTBOX_RELAY_OPTIONS,
  deliveryStreamDefinition,
  eventsStreamDefinition,
  OutboxModule,
} from '@envoi/shared-outbox';
import {
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';

import { messagesDataSourceOptions } from './database/data-source-options';
import { DeliveryEventsModule } from './delivery-events/delivery-events.module';
import { MessagesConfig, SERVICE_NAME } from './messages.config';
import { MessagesModule } from './messages/messages.module';
import { TrackingModule } from './tracking/tracking.module';

/** Creates the buckets large bodies travel through, so neither side has to wait for the other. */
@Injectable()
class TransferBuckets implements OnApplicationBootstrap {
  constructor(
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: MessagesConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const bucket of [MESSAGE_UPLOADS_BUCKET, MESSAGE_DOWNLOADS_BUCKET]) {
      await ensureUploadBucket(this.connection, bucket, this.config.UPLOAD_TTL_MS);
    }
  }
}

/**
 * The messages service: accepts, stores, schedules, cancels, lists and reads messages, and moves
 * their statuses from the delivery events; PostgreSQL schema "messages"; delivery jobs and events
 * leave through its outbox.
 */
@Module({})
export class AppModule {
  static forRoot(config: MessagesConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [
        TypeOrmModule.forRoot({
          ...messagesDataSourceOptions(config.DATABASE_URL, config.DATABASE_POOL_SIZE),
          // Fail the boot quickly rather than retrying for minutes; the orchestrator restarts us.
          retryAttempts: 3,
          retryDelay: 1_000,
        }),
        NatsModule.forRoot({ servers: config.natsServers(), name: SERVICE_NAME }),
        DomainsClientModule.forRoot({ senderCacheMaxTtlMs: config.SENDER_CACHE_MAX_TTL_MS }),
        OutboxModule.forRoot({
          ...DEFAULT_OUTBOX_RELAY_OPTIONS,
          stream: eventsStreamDefinition(),
          streams: [deliveryStreamDefinition()],
          intervalMs: config.OUTBOX_RELAY_INTERVAL_MS,
          batchSize: config.OUTBOX_RELAY_BATCH,
        }),
        StreamConsumersModule.forRoot({
          consumes: Object.values(DeliveryStreamSubjects),
          settings: MessagesConfig,
          service: SERVICE_NAME,
          deadLetters: DeadLetterRepository,
        }),
        MessagesModule,
        DeliveryEventsModule,
        TrackingModule,
      ],
      providers: [{ provide: MessagesConfig, useValue: config }, TransferBuckets],
      exports: [MessagesConfig],
    };
  }
}
