import type { EntityManager } from 'typeorm';

import { MESSAGES_SCHEMA } from '../database/data-source-options';

/**
 * Data retention 0 ("deleted right after processing", platform notes 3.4): empties one message's
 * content at once, inside the caller's transaction (the one that made its status final). One
 * row; nothing when it is already purged.
 */
const PURGE_ONE_CONTENT_SQL = `
  UPDATE ${MESSAGES_SCHEMA}.message_contents SET raw = NULL, purged_at = now()
  WHERE message_id = $1 AND raw IS NOT NULL`;

export async function purgeContentNow(manager: EntityManager, messageId: string): Promise<void> {
  await manager.query(PURGE_ONE_CONTENT_SQL, [messageId]);
}
