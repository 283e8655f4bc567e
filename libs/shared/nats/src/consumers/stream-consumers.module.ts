import { type DynamicModule, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';

import {
  STREAM_CONSUMERS_OPTIONS,
  StreamConsumers,
  type StreamConsumersOptions,
} from './stream-consumers';

/**
 * Discovers the service's stream handlers at boot and runs their durable consumers (see
 * StreamConsumers). Import once, in the app module.
 */
@Module({})
export class StreamConsumersModule {
  static forRoot(options: StreamConsumersOptions): DynamicModule {
    return {
      module: StreamConsumersModule,
      imports: [DiscoveryModule],
      providers: [{ provide: STREAM_CONSUMERS_OPTIONS, useValue: options }, StreamConsumers],
      exports: [StreamConsumers],
    };
  }
}
