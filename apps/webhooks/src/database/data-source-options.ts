import path from 'node:path';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import { DeadLetterEntity, OutboxMessageEntity, ProcessedEventEntity } from '@envoi/shared-outbox';
import type { DataSourceOptions } from 'typeorm';

import { WebhookAttemptEntity } from '../dispatch/webhook-attempt.entity';
import { WebhookDeliveryEntity } from '../dispatch/webhook-delivery.entity';
import { WebhookStreamEventEntity } from '../stream/webhook-stream-event.entity';
import { WebhookEntity } from '../webhooks/webhook.entity';
import { WebhookDomainEntity } from '../webhooks/webhook-domain.entity';

export const WEBHOOKS_SCHEMA = 'webhooks';

export const WEBHOOKS_ENTITIES = [
  DeadLetterEntity,
  ProcessedEventEntity,
  OutboxMessageEntity,
  WebhookEntity,
  WebhookDomainEntity,
  WebhookDeliveryEntity,
  WebhookAttemptEntity,
  WebhookStreamEventEntity,
];

/**
 * Migrations are picked up from their folder: `.ts` under jest, `.js` once compiled into dist/.
 * Only `<epoch>-<PascalName>` files match, never source maps.
 */
const MIGRATIONS = path.join(__dirname, 'migrations', '[0-9]*-*.{ts,js}');

/** The webhooks schema's DataSource options, shared by the app, the migration job and the CLI. */
export function webhooksDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url,
    schema: WEBHOOKS_SCHEMA,
    entities: WEBHOOKS_ENTITIES,
    migrations: [MIGRATIONS],
    ...(poolSize === undefined ? {} : { poolSize }),
  });
}
