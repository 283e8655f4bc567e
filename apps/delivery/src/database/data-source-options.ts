import path from 'node:path';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import { DeadLetterEntity, OutboxMessageEntity } from '@envoi/shared-outbox';
import type { DataSourceOptions } from 'typeorm';

import { DeliveryAttemptEntity } from '../attempts/delivery-attempt.entity';
import {
  InboundReportEntity,
  InboundUnmatchedEntity,
} from '../inbound-bounces/inbound-report.entities';

export const DELIVERY_SCHEMA = 'delivery';

export const DELIVERY_ENTITIES = [
  DeliveryAttemptEntity,
  InboundReportEntity,
  InboundUnmatchedEntity,
  OutboxMessageEntity,
  DeadLetterEntity,
];

/**
 * Migrations are picked up from their folder: `.ts` under jest, `.js` once compiled into dist/.
 * Only `<epoch>-<PascalName>` files match, never source maps.
 */
const MIGRATIONS = path.join(__dirname, 'migrations', '[0-9]*-*.{ts,js}');

/** The delivery schema's DataSource options, shared by the app, the migration job and the CLI. */
export function deliveryDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url,
    schema: DELIVERY_SCHEMA,
    entities: DELIVERY_ENTITIES,
    migrations: [MIGRATIONS],
    ...(poolSize === undefined ? {} : { poolSize }),
  });
}
