import { ServiceKitModule } from '@envoi/shared-kit';
import { type DynamicModule, Module } from '@nestjs/common';

import { webhooksDataSourceOptions } from './database/data-source-options';
import { DeliveriesApiModule } from './deliveries-api/deliveries-api.module';
import { DispatchModule } from './dispatch/dispatch.module';
import { WEBHOOK_EVENT_DURABLES } from './dispatch/webhook-event-sources';
import { StreamModule } from './stream/stream.module';
import { SERVICE_NAME, WebhooksConfig } from './webhooks.config';
import { WebhooksModule } from './webhooks/webhooks.module';

/** The webhooks service, over NATS; PostgreSQL schema "webhooks". */
@Module({})
export class AppModule {
  static forRoot(config: WebhooksConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          service: SERVICE_NAME,
          config,
          dataSource: webhooksDataSourceOptions,
          // Events this service publishes go through its outbox (enqueueOutbox in a transaction).
          outbox: { settings: config },
          // Every stream subject consumed here, each handled by one @StreamConsumer method.
          consumes: Object.values(WEBHOOK_EVENT_DURABLES),
        }),
        WebhooksModule,
        DispatchModule,
        DeliveriesApiModule,
        StreamModule,
      ],
    };
  }
}
