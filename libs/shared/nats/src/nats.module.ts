import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { connect, type NatsConnection } from 'nats';

import { RpcClient } from './rpc-client';

export const NATS_CONNECTION = Symbol('NATS_CONNECTION');

export interface NatsModuleOptions {
  servers: string[];
  /** Connection name shown by the server: the service name. */
  name: string;
  rpcTimeoutMs?: number;
}

export async function connectNats(options: NatsModuleOptions): Promise<NatsConnection> {
  return connect({
    servers: options.servers,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // No Error (a captured stack) made ahead for every request and JetStream publication, in
    // case it fails: errors keep their codes, only the caller's stack is left out.
    noAsyncTraces: true,
  });
}

@Injectable()
class NatsConnectionCloser implements OnApplicationShutdown {
  constructor(@Inject(NATS_CONNECTION) private readonly connection: NatsConnection) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.connection.isClosed() || this.connection.isDraining()) return;
    await this.connection.drain();
  }
}

/** One NATS connection per process, and a typed RpcClient over it. */
@Global()
@Module({})
export class NatsModule {
  static forRoot(options: NatsModuleOptions): DynamicModule {
    return {
      module: NatsModule,
      providers: [
        { provide: NATS_CONNECTION, useFactory: () => connectNats(options) },
        {
          provide: RpcClient,
          useFactory: (connection: NatsConnection) =>
            new RpcClient(connection, options.rpcTimeoutMs),
          inject: [NATS_CONNECTION],
        },
        NatsConnectionCloser,
      ],
      exports: [NATS_CONNECTION, RpcClient],
    };
  }
}
