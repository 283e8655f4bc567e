import {
  configureServiceTransport,
  connectNats,
  natsMicroserviceOptions,
  RpcClient,
} from '@envoi/shared-nats';
import { createLogger } from '@envoi/shared-observability';
import type { INestMicroservice, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NatsConnection } from 'nats';

export interface ServiceHarness {
  app: INestMicroservice;
  rpc: RpcClient;
  connection: NatsConnection;
  close(): Promise<void>;
}

/**
 * Boots one service's root module as a real NATS microservice (in this process, against the real
 * PostgreSQL and NATS of the global setup) and returns a client that talks to it over the bus.
 */
export async function startServiceHarness(
  service: string,
  rootModule: Type<unknown>,
): Promise<ServiceHarness> {
  const servers = (process.env['NATS_URL'] ?? '').split(',');
  const logger = createLogger(service, process.env['LOG_LEVEL'] ?? 'silent');
  const app = await NestFactory.createMicroservice(rootModule, {
    ...natsMicroserviceOptions(service, servers),
    logger: false,
  });
  configureServiceTransport(app, logger);
  await app.listen();
  const connection = await connectNats({ servers, name: `${service}-test-client` });
  return {
    app,
    rpc: new RpcClient(connection, 10_000),
    connection,
    async close() {
      await connection.drain();
      await app.close();
    },
  };
}
