import { DomainsStreamSubjects } from '@envoi/contracts-domains';
import { InboundStreamSubjects } from '@envoi/contracts-routes';
import { ServiceKitModule } from '@envoi/shared-kit';
import { type DynamicModule, Module } from '@nestjs/common';

import { routesDataSourceOptions } from './database/data-source-options';
import { DeliveryModule } from './delivery/delivery.module';
import { RoutesConfig, SERVICE_NAME } from './routes.config';
import { RoutesModule } from './routes/routes.module';

/** The routes service, over NATS; PostgreSQL schema "routes". */
@Module({})
export class AppModule {
  static forRoot(config: RoutesConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          service: SERVICE_NAME,
          config,
          dataSource: routesDataSourceOptions,
          // Events this service publishes go through its outbox (enqueueOutbox in a transaction).
          outbox: { settings: config },
          // Every stream subject consumed here, each handled by one @StreamConsumer method.
          consumes: [InboundStreamSubjects.routed, DomainsStreamSubjects.deleted],
        }),
        RoutesModule,
        DeliveryModule,
      ],
    };
  }
}
