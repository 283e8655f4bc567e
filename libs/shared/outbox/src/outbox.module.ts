import { NATS_CONNECTION } from '@envoi/shared-nats';
import {
  type DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

import { OutboxRelay, type OutboxRelayOptions } from './outbox-relay';

export const OUTBOX_RELAY_OPTIONS = Symbol('OUTBOX_RELAY_OPTIONS');

/** The process's outbox relay: started once the app is up, stopped before connections close. */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, OnModuleDestroy {
  readonly relay: OutboxRelay;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    @Inject(NATS_CONNECTION) connection: NatsConnection,
    @Inject(OUTBOX_RELAY_OPTIONS) options: OutboxRelayOptions,
  ) {
    this.relay = new OutboxRelay(dataSource, connection, options, new Logger('OutboxRelay'));
  }

  onApplicationBootstrap(): void {
    this.relay.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.relay.stop();
  }

  /** Call after committing a transaction that enqueued events. */
  notify(): void {
    this.relay.notify();
  }
}

/** Needs the TypeORM root module (with OutboxMessageEntity) and NatsModule in the app. */
@Module({})
export class OutboxModule {
  static forRoot(options: OutboxRelayOptions): DynamicModule {
    return {
      module: OutboxModule,
      global: true,
      providers: [{ provide: OUTBOX_RELAY_OPTIONS, useValue: options }, OutboxRelayService],
      exports: [OutboxRelayService],
    };
  }
}
