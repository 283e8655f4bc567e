import path from 'node:path';

import { serviceDataSourceOptions } from '@envoi/shared-database';
import { DeadLetterEntity, OutboxMessageEntity } from '@envoi/shared-outbox';
import type { DataSourceOptions } from 'typeorm';

import { AcceptedRequestEntity } from '../accepted-requests/accepted-request.entity';
import { MessageProcessedEventEntity } from '../delivery-events/message-processed-event.entity';
import { MessageEntity } from '../messages/message.entity';
import { MessageContentEntity } from '../messages/message-content.entity';
import { SendEntity } from '../messages/send.entity';
import { SendAttachmentEntity } from '../messages/send-attachment.entity';
import { SendLinkEntity } from '../tracking/send-link.entity';
import { TrackedLinkEntity } from '../tracking/tracked-link.entity';

export const MESSAGES_SCHEMA = 'messages';

export const MESSAGES_ENTITIES = [
  AcceptedRequestEntity,
  DeadLetterEntity,
  MessageEntity,
  MessageContentEntity,
  SendEntity,
  SendAttachmentEntity,
  SendLinkEntity,
  TrackedLinkEntity,
  MessageProcessedEventEntity,
  OutboxMessageEntity,
];

/**
 * Migrations are picked up from their folder: `.ts` under jest, `.js` once compiled into dist/.
 * Only `<epoch>-<PascalName>` files match, never source maps.
 */
const MIGRATIONS = path.join(__dirname, 'migrations', '[0-9]*-*.{ts,js}');

/** The messages schema's DataSource options, shared by the app, the migration job and the CLI. */
export function messagesDataSourceOptions(url: string, poolSize?: number): DataSourceOptions {
  return serviceDataSourceOptions({
    url,
    schema: MESSAGES_SCHEMA,
    entities: MESSAGES_ENTITIES,
    migrations: [MIGRATIONS],
    ...(poolSize === undefined ? {} : { poolSize }),
  });
}
