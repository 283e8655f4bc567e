import { ComplaintStreamSubjects, DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { ServiceKitModule } from '@envoi/shared-kit';
import { type DynamicModule, Module } from '@nestjs/common';

import { suppressionsDataSourceOptions } from './database/data-source-options';
import { SERVICE_NAME, SuppressionsConfig } from './suppressions.config';
import { SuppressionsModule } from './suppressions/suppressions.module';

/** The suppressions service: the suppression list and send-time checks; schema "suppressions". */
@Module({})
export class AppModule {
  static forRoot(config: SuppressionsConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          service: SERVICE_NAME,
          config,
          dataSource: suppressionsDataSourceOptions,
          outbox: { settings: config },
          consumes: [
            DeliveryStreamSubjects.bounced,
            DeliveryStreamSubjects.failed,
            DeliveryStreamSubjects.delivered,
            DeliveryStreamSubjects.transientError,
            DeliveryStreamSubjects.outcomeBatch,
            ComplaintStreamSubjects.complaint,
          ],
        }),
        SuppressionsModule,
      ],
    };
  }
}
