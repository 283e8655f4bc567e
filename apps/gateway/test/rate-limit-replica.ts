import { connectNats, RpcClient } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import type { NatsConnection } from 'nats';

import type { GatewayConfig } from '../src/gateway.config';
import { RateLimiter } from '../src/rate-limit/rate-limiter.service';
import { ReplicaRateLimits } from '../src/rate-limit/replica-rate-limits.service';
import { silentLogger } from './gateway-test-support';

/** One gateway replica's rate limiting, on its own connection to the int tier's NATS. */
export interface RateLimitReplica {
  limiter: RateLimiter;
  replicas: ReplicaRateLimits;
  connection: NatsConnection;
  warnings: jest.SpyInstance;
  stop(): Promise<void>;
}

export async function startRateLimitReplica(config: GatewayConfig): Promise<RateLimitReplica> {
  const connection = await connectNats({ servers: config.natsServers(), name: 'gateway-test' });
  const logger: Logger = silentLogger();
  const warnings = jest.spyOn(logger, 'warn');
  const replicas = new ReplicaRateLimits(config, connection, new RpcClient(connection), logger);
  replicas.onModuleInit();
  return {
    limiter: new RateLimiter(replicas, config),
    replicas,
    connection,
    warnings,
    async stop() {
      replicas.onModuleDestroy();
      if (!connection.isClosed()) await connection.close();
    },
  };
}
