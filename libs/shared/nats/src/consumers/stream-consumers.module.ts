import { DeclaredMethods } from '@envoi/shared-jobs';
import { type DynamicModule, Module, type Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';

import { DEAD_LETTER_STORE, type DeadLetterStore } from './dead-letters';
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
  static forRoot(
    options: StreamConsumersOptions & {
      /** Where the dead letters go (DeadLetterRepository); without, they are only logged. */
      deadLetters?: Type<DeadLetterStore>;
    },
  ): DynamicModule {
    const { deadLetters, ...consumerOptions } = options;
    return {
      module: StreamConsumersModule,
      // Handlers that stop the consumers themselves first (closing what they use after) inject it.
      global: true,
      imports: [DiscoveryModule],
      providers: [
        { provide: STREAM_CONSUMERS_OPTIONS, useValue: consumerOptions },
        ...(deadLetters ? [{ provide: DEAD_LETTER_STORE, useClass: deadLetters }] : []),
        DeclaredMethods,
        StreamConsumers,
      ],
      exports: [StreamConsumers],
    };
  }
}
