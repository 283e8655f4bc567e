import { type DynamicModule, type InjectionToken, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';

import { DeclaredMethods } from './declared-methods';
import { PERIODIC_JOBS_SETTINGS, PeriodicJobs } from './periodic-jobs';

/** Runs the process's @PeriodicJob methods; `settings` is the config class their intervals read. */
@Module({})
export class PeriodicJobsModule {
  static forRoot(options: { settings: InjectionToken }): DynamicModule {
    return {
      module: PeriodicJobsModule,
      imports: [DiscoveryModule],
      providers: [
        { provide: PERIODIC_JOBS_SETTINGS, useValue: options.settings },
        DeclaredMethods,
        PeriodicJobs,
      ],
      exports: [PeriodicJobs],
    };
  }
}
