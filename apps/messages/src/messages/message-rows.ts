import type { EntityManager } from 'typeorm';

import { MESSAGES_SCHEMA } from '../database/data-source-options';
import { type Columns, insertRows } from './insert-rows';
import type { MessageEntity } from './message.entity';
import type { MessageContentEntity } from './message-content.entity';

/** A message row as accept writes it (`seq` comes from the table). */
export type MessageRow = Omit<MessageEntity, 'seq'>;

/** A content row as accept writes it. */
export type MessageContentRow = Omit<MessageContentEntity, 'message'>;

const MESSAGE_COLUMNS: Columns<MessageRow> = {
  id: ['uuid', (row) => row.id],
  account_id: ['uuid', (row) => row.accountId],
  domain_id: ['uuid', (row) => row.domainId],
  domain: ['text', (row) => row.domain],
  kind: ['text', (row) => row.kind],
  api: ['text', (row) => row.api],
  credential_id: ['uuid', (row) => row.credentialId],
  sender: ['text', (row) => row.sender],
  recipient: ['text', (row) => row.recipient],
  envelope_recipients: ['text[]', (row) => row.envelopeRecipients],
  subject: ['text', (row) => row.subject],
  tags: ['text[]', (row) => row.tags],
  status: ['text', (row) => row.status],
  message_id_header: ['text', (row) => row.messageIdHeader],
  sandbox: ['boolean', (row) => row.sandbox],
  sandbox_result: ['text', (row) => row.sandboxResult],
  track_opens: ['boolean', (row) => row.trackOpens],
  track_clicks: ['boolean', (row) => row.trackClicks],
  retention_metadata_days: ['smallint', (row) => row.retentionMetadataDays],
  retention_data_days: ['smallint', (row) => row.retentionDataDays],
  first_attempt_at: ['timestamptz', (row) => row.firstAttemptAt],
  expires_at: ['timestamptz', (row) => row.expiresAt],
  retain_until: ['timestamptz', (row) => row.retainUntil],
  job_id: ['uuid', (row) => row.jobId],
  created_at: ['timestamptz', (row) => row.createdAt],
  updated_at: ['timestamptz', (row) => row.updatedAt],
  sent_at: ['timestamptz', (row) => row.sentAt],
  delivered_at: ['timestamptz', (row) => row.deliveredAt],
  num_attempts: ['integer', (row) => row.numAttempts],
  delivery_attempts: ['jsonb', (row) => row.deliveryAttempts],
  open_count: ['integer', (row) => row.openCount],
  click_count: ['integer', (row) => row.clickCount],
  bounce_classification: ['text', (row) => row.bounceClassification],
};

const CONTENT_COLUMNS: Columns<MessageContentRow> = {
  message_id: ['uuid', (row) => row.messageId],
  raw: ['bytea', (row) => row.raw],
  size: ['integer', (row) => row.size],
  purge_at: ['timestamptz', (row) => row.purgeAt],
  purged_at: ['timestamptz', (row) => row.purgedAt],
};

/** One INSERT of every message row, in their order (seq numbers them so). */
export function insertMessages(manager: EntityManager, rows: readonly MessageRow[]): Promise<void> {
  return insertRows(manager, `${MESSAGES_SCHEMA}.messages`, MESSAGE_COLUMNS, rows);
}

/** One INSERT of every content row. */
export function insertMessageContents(
  manager: EntityManager,
  rows: readonly MessageContentRow[],
): Promise<void> {
  return insertRows(manager, `${MESSAGES_SCHEMA}.message_contents`, CONTENT_COLUMNS, rows);
}

/** A link of a message tracked for clicks (messages.tracked_links). */
export interface TrackedLinkRow {
  messageId: string;
  position: number;
  url: string;
}

const TRACKED_LINK_COLUMNS: Columns<TrackedLinkRow> = {
  message_id: ['uuid', (row) => row.messageId],
  position: ['integer', (row) => row.position],
  url: ['text', (row) => row.url],
};

/** One INSERT of every tracked link of the send (nothing when none). */
export function insertTrackedLinks(
  manager: EntityManager,
  rows: readonly TrackedLinkRow[],
): Promise<void> {
  return insertRows(manager, `${MESSAGES_SCHEMA}.tracked_links`, TRACKED_LINK_COLUMNS, rows);
}
