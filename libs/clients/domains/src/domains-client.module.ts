import { type DynamicModule, Module } from '@nestjs/common';

import { DOMAINS_CLIENT_OPTIONS, DomainsClient, type DomainsClientOptions } from './domains-client';

/** Provides DomainsClient to the whole application (it needs NatsModule's connection). */
@Module({})
export class DomainsClientModule {
  static forRoot(options: DomainsClientOptions): DynamicModule {
    return {
      module: DomainsClientModule,
      global: true,
      providers: [{ provide: DOMAINS_CLIENT_OPTIONS, useValue: options }, DomainsClient],
      exports: [DomainsClient],
    };
  }
}
