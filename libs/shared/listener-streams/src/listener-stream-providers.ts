import type { ListenerStreamSubjects } from '@envoi/contracts-core';
import { RpcClient } from '@envoi/shared-nats';
import type { Provider, Type } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

import { ListenerStreamStore, type ListenerStreamTables } from './listener-stream-store';
import { type ListenerStreamAccess, ListenerStreams } from './listener-streams';

export interface ListenerStreamProvidersOptions<Config> {
  tables: ListenerStreamTables;
  subjects: ListenerStreamSubjects;
  /** The service's settings class, and the events each target keeps from them. */
  config: Type<Config>;
  bufferMax(config: Config): number;
  /** The service's provider saying who may listen (it may inject ListenerStreamStore). */
  access: Type<ListenerStreamAccess>;
}

/** ListenerStreamStore and ListenerStreams of a service, for its stream module's providers. */
export function listenerStreamProviders<Config>(
  options: ListenerStreamProvidersOptions<Config>,
): Provider[] {
  return [
    {
      provide: ListenerStreamStore,
      useFactory: (dataSource: DataSource) => new ListenerStreamStore(dataSource, options.tables),
      inject: [getDataSourceToken()],
    },
    {
      provide: ListenerStreams,
      useFactory: (
        store: ListenerStreamStore,
        rpc: RpcClient,
        config: Config,
        access: ListenerStreamAccess,
      ) =>
        new ListenerStreams({
          subjects: options.subjects,
          store,
          rpc,
          bufferMax: options.bufferMax(config),
          access,
        }),
      inject: [ListenerStreamStore, RpcClient, options.config, options.access],
    },
  ];
}
