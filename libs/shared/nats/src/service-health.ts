import { databaseCheck, Readiness, type ReadinessCheck } from '@envoi/shared-health';
import type { NatsConnection } from 'nats';

import { trackedConsumers } from './consumer-attachments';

/** The connection is open and the server answers a round trip. */
export function natsCheck(connection: NatsConnection): ReadinessCheck {
  return async () => {
    if (connection.isClosed()) throw new Error('connection closed');
    try {
      await connection.rtt();
    } catch (error) {
      throw new Error(`not connected (${error instanceof Error ? error.message : String(error)})`);
    }
  };
}

/** Every consumer loop declared over the connection has its consumer and pulls from it. */
export function consumersCheck(connection: NatsConnection): ReadinessCheck {
  return () => {
    const detached = trackedConsumers(connection).filter((consumer) => !consumer.attached());
    if (detached.length > 0) {
      throw new Error(`not attached: ${detached.map((consumer) => consumer.name).join(', ')}`);
    }
  };
}

export interface ServiceReadinessOptions {
  /** The service's bus connection (NATS_CONNECTION), which its stream consumers use. */
  connection: NatsConnection;
  /** Runs a statement through the service's own database pool. */
  query: (sql: string) => Promise<unknown>;
}

/**
 * A service's readiness: PostgreSQL and NATS answer, and every stream consumer it declared is
 * attached. Serve it with startHealthServer (HEALTH_HOST, HEALTH_PORT).
 */
export function serviceReadiness(options: ServiceReadinessOptions): Readiness {
  return new Readiness()
    .register('database', databaseCheck(options.query))
    .register('nats', natsCheck(options.connection))
    .register('consumers', consumersCheck(options.connection));
}
