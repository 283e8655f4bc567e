import { DomainsClientModule } from '@envoi/clients-domains';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { InboundStreamSubjects } from '@envoi/contracts-routes';
import { ServiceKitModule } from '@envoi/shared-kit';
import { deliveryStreamDefinition } from '@envoi/shared-outbox';
import { type DynamicModule, Module } from '@nestjs/common';

import { deliveryDataSourceOptions } from './database/data-source-options';
import { DeliveryConfig, SERVICE_NAME } from './delivery.config';
import { InboundReportsModule } from './inbound-bounces/inbound-reports.module';
import { DeliveryModule } from './worker/delivery.module';

/**
 * Outcome events (and retry jobs) are published at most this long after they are recorded: under
 * load one relay run publishes the outcomes of this long, not of a few messages each (every run
 * costs a claim, its transaction and a mark of what it published).
 */
const OUTBOX_WAKE_DELAY_MS = 100;

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
      imports: [
        ServiceKitModule.forRoot({
          service: SERVICE_NAME,
          config,
          dataSource: deliveryDataSourceOptions,
          rpcTimeoutMs: config.RPC_TIMEOUT_MS,
          outbox: {
            settings: config,
            streams: [deliveryStreamDefinition()],
            wakeDelayMs: OUTBOX_WAKE_DELAY_MS,
          },
          consumes: [
            MessagesStreamSubjects.deliveryJobs,
            InboundStreamSubjects.bounce,
            InboundStreamSubjects.feedback,
          ],
        }),
        DomainsClientModule.forRoot({ senderCacheMaxTtlMs: config.SENDER_CACHE_MAX_TTL_MS }),
        DeliveryModule,
        InboundReportsModule,
      ],
    };
  }
}
