import type { Page, PageRequest } from '@envoi/contracts-core';
import type { MessageFilters } from '@envoi/contracts-messages';
import { keysetPage } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, In, type SelectQueryBuilder } from 'typeorm';

import { MESSAGES_SCHEMA } from '../database/data-source-options';
import { type Columns, insertRows, insertRowsStatement, type InsertStatement } from './insert-rows';
import { MessageEntity } from './message.entity';
import { MessageContentEntity } from './message-content.entity';
import { messageIdHeaderKey, parseMessageRef } from './message-ids';
import { SendEntity } from './send.entity';

/** A message row as accept writes it (`seq` comes from the table). */
export type MessageRow = Omit<MessageEntity, 'seq' | 'send'>;

/** What is the recipient's own in a message row of a send. */
export type MessageRecipientRow = Pick<
  MessageRow,
  | 'id'
  | 'recipient'
  | 'envelopeRecipients'
  | 'subject'
  | 'messageIdHeader'
  | 'jobId'
  | 'recipientName'
  | 'substitutions'
>;

/** What every message row of a send holds alike. */
export type MessageSharedRow = Omit<MessageRow, keyof MessageRecipientRow>;

const RECIPIENT_COLUMNS: Columns<MessageRecipientRow> = {
  id: ['uuid', (row) => row.id],
  recipient: ['text', (row) => row.recipient],
  envelope_recipients: ['text[]', (row) => row.envelopeRecipients],
  subject: ['text', (row) => row.subject],
  message_id_header: ['text', (row) => row.messageIdHeader],
  job_id: ['uuid', (row) => row.jobId],
  recipient_name: ['text', (row) => row.recipientName],
  substitutions: ['json', (row) => row.substitutions],
};

const SHARED_COLUMNS: Columns<MessageSharedRow> = {
  account_id: ['uuid', (row) => row.accountId],
  domain_id: ['uuid', (row) => row.domainId],
  domain: ['text', (row) => row.domain],
  kind: ['text', (row) => row.kind],
  api: ['text', (row) => row.api],
  credential_id: ['uuid', (row) => row.credentialId],
  sender: ['text', (row) => row.sender],
  tags: ['text[]', (row) => row.tags],
  status: ['text', (row) => row.status],
  sandbox: ['boolean', (row) => row.sandbox],
  sandbox_result: ['text', (row) => row.sandboxResult],
  track_opens: ['boolean', (row) => row.trackOpens],
  track_clicks: ['boolean', (row) => row.trackClicks],
  retention_metadata_days: ['smallint', (row) => row.retentionMetadataDays],
  retention_data_days: ['smallint', (row) => row.retentionDataDays],
  first_attempt_at: ['timestamptz', (row) => row.firstAttemptAt],
  expires_at: ['timestamptz', (row) => row.expiresAt],
  retain_until: ['timestamptz', (row) => row.retainUntil],
  created_at: ['timestamptz', (row) => row.createdAt],
  updated_at: ['timestamptz', (row) => row.updatedAt],
  sent_at: ['timestamptz', (row) => row.sentAt],
  delivered_at: ['timestamptz', (row) => row.deliveredAt],
  num_attempts: ['integer', (row) => row.numAttempts],
  delivery_attempts: ['jsonb', (row) => row.deliveryAttempts],
  open_count: ['integer', (row) => row.openCount],
  click_count: ['integer', (row) => row.clickCount],
  bounce_classification: ['text', (row) => row.bounceClassification],
  send_id: ['uuid', (row) => row.sendId],
  content_purged_at: ['timestamptz', (row) => row.contentPurgedAt],
};

/** Every column of a message row, each read from the row itself. */
const MESSAGE_COLUMNS: Columns<MessageRow> = { ...RECIPIENT_COLUMNS, ...SHARED_COLUMNS };

/** A content row as accept writes it. */
export type MessageContentRow = Omit<MessageContentEntity, 'message'>;

const CONTENT_COLUMNS: Columns<MessageContentRow> = {
  message_id: ['uuid', (row) => row.messageId],
  raw: ['bytea', (row) => row.raw],
  size: ['integer', (row) => row.size],
  purge_at: ['timestamptz', (row) => row.purgeAt],
  purged_at: ['timestamptz', (row) => row.purgedAt],
};

/**
 * Cancels a scheduled message in one statement: it is cancelled only while its delivery job is
 * unpublished (a relay publishing it holds its row, which this updates, so this waits for the
 * outcome). A job covers a chunk of a send: it is withdrawn (cancelled_at) once every message of
 * it is cancelled; until then it stays, and the worker skips the cancelled messages. Cancelled
 * is final: a data retention of 0 empties the content at once (a stored raw content emptied, a
 * send's message marked purged). $3: the domain restriction or null.
 */
const CANCEL_SQL = `
  WITH target AS (
    SELECT id, job_id, send_id FROM ${MESSAGES_SCHEMA}.messages
    WHERE id = $1 AND account_id = $2 AND status = 'Scheduled'
      AND ($3::text[] IS NULL OR domain = ANY($3::text[]))
  ), job AS (
    UPDATE ${MESSAGES_SCHEMA}.outbox AS job SET cancelled_at = CASE WHEN NOT EXISTS (
        SELECT 1 FROM ${MESSAGES_SCHEMA}.messages AS other
        WHERE other.send_id = target.send_id AND other.job_id = job.id
          AND other.id <> $1 AND other.status <> 'Cancelled'
      ) THEN now() END
    FROM target
    WHERE job.id = target.job_id AND job.published_at IS NULL AND job.cancelled_at IS NULL
    RETURNING job.id
  ), cancelled AS (
    UPDATE ${MESSAGES_SCHEMA}.messages SET status = 'Cancelled', updated_at = now(),
      content_purged_at = CASE WHEN retention_data_days = 0 AND send_id IS NOT NULL
        THEN now() ELSE content_purged_at END,
      substitutions = CASE WHEN retention_data_days = 0 THEN NULL ELSE substitutions END
    WHERE id = $1 AND account_id = $2 AND status = 'Scheduled' AND job_id IN (SELECT id FROM job)
    RETURNING id, retention_data_days, send_id
  ), purged AS (
    UPDATE ${MESSAGES_SCHEMA}.message_contents SET raw = NULL, purged_at = now()
    WHERE message_id IN (SELECT id FROM cancelled WHERE retention_data_days = 0)
      AND raw IS NOT NULL
    RETURNING 1
  )
  SELECT id, retention_data_days, send_id FROM cancelled`;

/** A message just cancelled. */
export interface CancelledMessage {
  retentionDataDays: number;
  sendId: string | null;
}

/** `%` and `_` are wildcards of LIKE; a subject filter matches them literally. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

/** Messages and their contents (messages.messages, messages.message_contents). */
@Injectable()
export class MessagesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One INSERT of every message row, in their order (seq numbers them so). */
  insertMessages(
    rows: readonly MessageRow[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    return insertRows(manager, `${MESSAGES_SCHEMA}.messages`, MESSAGE_COLUMNS, rows);
  }

  /**
   * The INSERT of a send's messages, to run as part of a statement of the caller's: one array
   * per column the recipients' rows differ in, one value for each column they share.
   */
  insertSendMessagesStatement(
    shared: MessageSharedRow,
    recipients: readonly MessageRecipientRow[],
  ): InsertStatement {
    return insertRowsStatement(`${MESSAGES_SCHEMA}.messages`, RECIPIENT_COLUMNS, recipients, {
      columns: SHARED_COLUMNS,
      values: shared,
    });
  }

  /** One INSERT of every content row. */
  insertContents(
    rows: readonly MessageContentRow[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    return insertRows(manager, `${MESSAGES_SCHEMA}.message_contents`, CONTENT_COLUMNS, rows);
  }

  /** A page of the account's messages (within `domains` when given), newest first. */
  async list(
    accountId: string,
    domains: readonly string[] | undefined,
    filters: MessageFilters,
    page: PageRequest,
  ): Promise<Page<MessageEntity>> {
    const query = this.dataSource.manager
      .createQueryBuilder(MessageEntity, 'message')
      .where('message.accountId = :accountId', { accountId });
    if (domains) query.andWhere('message.domain IN (:...domains)', { domains });
    const submittedSendIds =
      filters.message_id_header === undefined
        ? []
        : await this.submittedSendIds(accountId, messageIdHeaderKey(filters.message_id_header));
    applyFilters(query, filters, submittedSendIds);
    return keysetPage(query, 'message', page);
  }

  /** The latest sends of the account submitted over SMTP with this Message-ID header. */
  private async submittedSendIds(accountId: string, header: string): Promise<string[]> {
    const sends = await this.dataSource.manager
      .createQueryBuilder(SendEntity, 'send')
      .select('send.id', 'id')
      .where('send.accountId = :accountId AND send.messageIdHeader = :header', {
        accountId,
        header,
      })
      .orderBy('send.id', 'DESC')
      .limit(SUBMITTED_SENDS_PER_HEADER_MAX)
      .getRawMany<{ id: string }>();
    return sends.map((send) => send.id);
  }

  findById(id: string): Promise<MessageEntity | null> {
    return this.dataSource.manager.findOneBy(MessageEntity, { id });
  }

  /** The messages of `ids` that exist, in the order of `ids`. */
  async findByIds(ids: readonly string[]): Promise<MessageEntity[]> {
    const found = await this.dataSource.manager.findBy(MessageEntity, { id: In([...ids]) });
    const byId = new Map(found.map((message) => [message.id, message]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  findInAccount(id: string, accountId: string): Promise<MessageEntity | null> {
    return this.dataSource.manager.findOneBy(MessageEntity, { id, accountId });
  }

  /** The message's raw content alone; null once purged (or when there is none). */
  async findRaw(messageId: string): Promise<Buffer | null> {
    const content = await this.dataSource.manager.findOne(MessageContentEntity, {
      select: { messageId: true, raw: true },
      where: { messageId },
    });
    return content?.raw ?? null;
  }

  /**
   * Cancels the message if it is still Scheduled and its job unpublished (see CANCEL_SQL);
   * `domains`: the domain restriction, or null. The message when it was cancelled.
   */
  async cancelScheduled(
    id: string,
    accountId: string,
    domains: readonly string[] | null,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<CancelledMessage | undefined> {
    const rows = await manager.query<
      Array<{ id: string; retention_data_days: number; send_id: string | null }>
    >(CANCEL_SQL, [id, accountId, domains]);
    const row = rows[0];
    if (!row) return undefined;
    return { retentionDataDays: row.retention_data_days, sendId: row.send_id };
  }
}

/** A client may reuse a Message-ID: the filter finds the messages of its latest sends this many. */
const SUBMITTED_SENDS_PER_HEADER_MAX = 1000;

/**
 * The getMessages filters (statuses checked by the caller): `status` any of the listed; `sender`
 * and `recipient` exact addresses (case-insensitive; a conversation matches any of its
 * recipients); `subject` a case-insensitive substring; `message_id_header` exact (brackets
 * optional; a submitted message matches its send's header, the send among `submittedSendIds`);
 * `tags` any of the listed (like the comma-separated statuses); `from_time` inclusive and
 * `to_time` exclusive, on created_at.
 */
function applyFilters(
  query: SelectQueryBuilder<MessageEntity>,
  filters: MessageFilters,
  submittedSendIds: readonly string[],
): void {
  if (filters.status !== undefined && filters.status.length > 0) {
    query.andWhere('message.status IN (:...statuses)', { statuses: filters.status });
  }
  if (filters.sender !== undefined) {
    query.andWhere('lower(message.sender) = :sender', { sender: filters.sender.toLowerCase() });
  }
  if (filters.recipient !== undefined) {
    query.andWhere('message.envelopeRecipients @> ARRAY[CAST(:recipient AS text)]', {
      recipient: filters.recipient.toLowerCase(),
    });
  }
  if (filters.subject !== undefined && filters.subject !== '') {
    query.andWhere(`message.subject ILIKE :subject ESCAPE '\\'`, {
      subject: likePattern(filters.subject),
    });
  }
  if (filters.message_id_header !== undefined) {
    const header = messageIdHeaderKey(filters.message_id_header);
    // An API message's header is its own `<id@domain>`: it is found by the id (the primary key).
    // A submitted message is delivered with its send's header, found by its send.
    const at = header.indexOf('@');
    const id = at === -1 ? null : (parseMessageRef(header.slice(1, at))?.id ?? null);
    query.andWhere(
      '((message.id = :headerId AND message.messageIdHeader = :header) OR message.sendId = ANY(:headerSendIds))',
      { headerId: id, header, headerSendIds: submittedSendIds },
    );
  }
  if (filters.tags !== undefined && filters.tags.length > 0) {
    query.andWhere('message.tags && CAST(:tags AS text[])', { tags: filters.tags });
  }
  if (filters.from_time !== undefined) {
    query.andWhere('message.createdAt >= :fromTime', { fromTime: new Date(filters.from_time) });
  }
  if (filters.to_time !== undefined) {
    query.andWhere('message.createdAt < :toTime', { toTime: new Date(filters.to_time) });
  }
}
