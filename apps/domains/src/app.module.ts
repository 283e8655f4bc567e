import { ServiceKitModule } from '@envoi/shared-kit';
import { type DynamicModule, Module } from '@nestjs/common';

import { domainsDataSourceOptions } from './database/data-source-options';
import { DomainsConfig, SERVICE_NAME } from './domains.config';
import { DomainsModule } from './domains/domains.module';

/** The domains service: sending domains, DKIM keys, DNS verification; PostgreSQL schema "domains". */
@Module({})
export class AppModule {
  static forRoot(config: DomainsConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ServiceKitModule.forRoot({
          service: SERVICE_NAME,
          config,
          dataSource: domainsDataSourceOptions,
          outbox: { settings: config },
        }),
        DomainsModule,
      ],
    };
  }
}
