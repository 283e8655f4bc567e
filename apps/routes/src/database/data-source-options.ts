import path from 'node:path';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import { DeadLetterEntity, OutboxMessageEntity, ProcessedEventEntity } from '@envoi/shared-outbox';
import type { DataSourceOptions } from 'typeorm';

import { InboundMessageEntity } from '../delivery/inbound-message.entity';
import { RouteDeliveryEntity } from '../delivery/route-delivery.entity';
import { RouteEntity } from '../routes/route.entity';
import { RouteStreamEventEntity } from '../stream/route-stream-event.entity';

export const ROUTES_SCHEMA = 'routes';

/** The service's kit tables (outbox, inbox, dead letters); add its own entities here. */
export const ROUTES_ENTITIES = [
  DeadLetterEntity,
  ProcessedEventEntity,
  OutboxMessageEntity,
  RouteEntity,
  InboundMessageEntity,
  RouteDeliveryEntity,
  RouteStreamEventEntity,
];

/**
 * Migrations are picked up from their folder: `.ts` under jest, `.js` once compiled into dist/.
 * Only `<epoch>-<PascalName>` files match, never source maps.
 */
const MIGRATIONS = path.join(__dirname, 'migrations', '[0-9]*-*.{ts,js}');

/** The routes schema's DataSource options, shared by the app, the migration job and the CLI. */
export function routesDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url,
    schema: ROUTES_SCHEMA,
    entities: ROUTES_ENTITIES,
    migrations: [MIGRATIONS],
    ...(poolSize === undefined ? {} : { poolSize }),
  });
}
