import { DomainsClientModule } from '@envoi/clients-domains';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { MESSAGE_DOWNLOADS_BUCKET, MESSAGE_UPLOADS_BUCKET } from '@envoi/contracts-messages';
import { ServiceKitModule } from '@envoi/shared-kit';
import { ensureUploadBucket, NATS_CONNECTION } from '@envoi/shared-nats';
import { deliveryStreamDefinition } from '@envoi/shared-outbox';
import {
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
} from '@nestjs/common';
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
      imports: [
        ServiceKitModule.forRoot({
          service: SERVICE_NAME,
          config,
          dataSource: messagesDataSourceOptions,
          outbox: { settings: config, streams: [deliveryStreamDefinition()] },
          consumes: Object.values(DeliveryStreamSubjects),
        }),
        DomainsClientModule.forRoot({ senderCacheMaxTtlMs: config.SENDER_CACHE_MAX_TTL_MS }),
        MessagesModule,
        DeliveryEventsModule,
        TrackingModule,
      ],
      providers: [TransferBuckets],
    };
  }
}
