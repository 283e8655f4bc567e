import { randomUUID } from 'node:crypto';

import {
  CodedError,
  CommonErrorCode,
  type MessageResponse,
  normalizeDomainName,
  type Page,
} from '@envoi/contracts-core';
import {
  INLINE_PAYLOAD_MAX_BYTES,
  type ListMessagesRequest,
  MESSAGE_DOWNLOADS_BUCKET,
  MESSAGE_STATUSES,
  type MessageFilters,
  type MessageRecord,
  type MessageRef,
  type MessageSummaryRecord,
} from '@envoi/contracts-messages';
import { keysetPage } from '@envoi/shared-database';
import { NATS_CONNECTION, putUpload } from '@envoi/shared-nats';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource, type SelectQueryBuilder } from 'typeorm';

import { parseMime } from '../composition';
import { MESSAGES_SCHEMA } from '../database/data-source-options';
import { MessagesConfig } from '../messages.config';
import { MessageEntity } from './message.entity';
import { toMessageSummary } from './message.mapper';
import { MessageContentEntity } from './message-content.entity';
import { messageIdHeader, parseMessageRef } from './message-ids';
import { MessagesException } from './messages.exception';

const KNOWN_STATUSES: ReadonlySet<string> = new Set(MESSAGE_STATUSES);

/**
 * Cancels a scheduled message in one statement: the delivery job is withdrawn only while it is
 * unpublished (a relay publishing it holds its row, so this waits for the outcome), and the
 * message becomes Cancelled only if its job was withdrawn. Cancelled is final: a data retention
 * of 0 empties the content at once. $3: the domain restriction or null.
 */
const CANCEL_SQL = `
  WITH job AS (
    UPDATE ${MESSAGES_SCHEMA}.outbox AS job SET cancelled_at = now()
    FROM ${MESSAGES_SCHEMA}.messages AS message
    WHERE message.id = $1 AND message.account_id = $2 AND message.status = 'Scheduled'
      AND ($3::text[] IS NULL OR message.domain = ANY($3::text[]))
      AND job.id = message.job_id AND job.published_at IS NULL AND job.cancelled_at IS NULL
    RETURNING job.id
  ), cancelled AS (
    UPDATE ${MESSAGES_SCHEMA}.messages SET status = 'Cancelled', updated_at = now()
    WHERE id = $1 AND account_id = $2 AND status = 'Scheduled' AND job_id IN (SELECT id FROM job)
    RETURNING id, retention_data_days
  ), purged AS (
    UPDATE ${MESSAGES_SCHEMA}.message_contents SET raw = NULL, purged_at = now()
    WHERE message_id IN (SELECT id FROM cancelled WHERE retention_data_days = 0)
      AND raw IS NOT NULL
    RETURNING 1
  )
  SELECT id FROM cancelled`;

/** `%` and `_` are wildcards of LIKE; a subject filter matches them literally. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

function normalizedDomains(domains: readonly string[] | undefined): string[] | undefined {
  return domains?.map(normalizeDomainName);
}

/** Reads, lists and cancels messages of an account. */
@Injectable()
export class MessagesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: MessagesConfig,
  ) {}

  /** Newest first; every filter of the reference contract (see applyFilters). */
  async list(request: ListMessagesRequest): Promise<Page<MessageSummaryRecord>> {
    const domains = normalizedDomains(request.domains);
    if (domains?.length === 0) return { data: [], has_more: false };
    const query = this.dataSource.manager
      .createQueryBuilder(MessageEntity, 'message')
      .where('message.accountId = :accountId', { accountId: request.account_id });
    if (domains) query.andWhere('message.domain IN (:...domains)', { domains });
    applyFilters(query, request.filters);
    const page = await keysetPage(query, 'message', request.page);
    return { ...page, data: page.data.map(toMessageSummary) };
  }

  /**
   * The message with its raw content and parsed content (null once purged). Content too large
   * for a NATS reply travels through the downloads bucket (MessageRecord.content_download).
   */
  async get(ref: MessageRef): Promise<MessageRecord> {
    const message = await this.find(ref);
    const content = await this.dataSource.manager.findOne(MessageContentEntity, {
      where: { messageId: message.id },
    });
    const raw = content?.raw ?? null;
    const record: MessageRecord = {
      ...toMessageSummary(message),
      content: raw === null ? null : raw.toString('utf8'),
      content_parsed: raw === null ? null : await parseMime(raw),
    };
    const json = Buffer.from(
      JSON.stringify({ content: record.content, content_parsed: record.content_parsed }),
      'utf8',
    );
    if (json.length <= INLINE_PAYLOAD_MAX_BYTES) return record;
    const download = await putUpload(
      this.connection,
      MESSAGE_DOWNLOADS_BUCKET,
      `${message.id}.${randomUUID()}`,
      json,
      this.config.UPLOAD_TTL_MS,
    );
    return { ...record, content: null, content_parsed: null, content_download: download };
  }

  /** Spec 3.2: a scheduled message becomes cancelled and never goes out. */
  async cancel(ref: MessageRef): Promise<MessageResponse> {
    const parsed = parseMessageRef(ref.message_id);
    if (!parsed) throw MessagesException.notFound();
    const domains = normalizedDomains(ref.domains) ?? null;
    const rows = await this.dataSource.query<Array<{ id: string }>>(CANCEL_SQL, [
      parsed.id,
      ref.account_id,
      domains,
    ]);
    if (rows.length === 1) {
      const message = await this.find(ref);
      return { message: `message ${message.messageIdHeader} cancelled successfully` };
    }
    const message = await this.find(ref);
    if (message.status === 'Scheduled') {
      throw MessagesException.notCancellableAnyMore();
    }
    throw MessagesException.notCancellable(message.status);
  }

  /** By `<uuid@domain>` or the bare uuid, within the account and the domain restriction. */
  private async find(ref: MessageRef): Promise<MessageEntity> {
    const parsed = parseMessageRef(ref.message_id);
    if (!parsed) throw MessagesException.notFound();
    const message = await this.dataSource.manager.findOneBy(MessageEntity, {
      id: parsed.id,
      accountId: ref.account_id,
    });
    if (!message) throw MessagesException.notFound();
    if (
      parsed.domain !== undefined &&
      messageIdHeader(parsed.id, parsed.domain) !== message.messageIdHeader
    ) {
      throw MessagesException.notFound();
    }
    const domains = normalizedDomains(ref.domains);
    if (domains && !domains.includes(message.domain)) throw MessagesException.notFound();
    return message;
  }
}

/**
 * The getMessages filters: `status` any of the listed; `sender` and `recipient` exact addresses
 * (case-insensitive; a conversation matches any of its recipients); `subject` a case-insensitive
 * substring; `message_id_header` exact (brackets optional); `tags` any of the listed (like the
 * comma-separated statuses); `from_time` inclusive and `to_time` exclusive, on created_at.
 */
function applyFilters(query: SelectQueryBuilder<MessageEntity>, filters: MessageFilters): void {
  if (filters.status !== undefined && filters.status.length > 0) {
    const unknown = filters.status.filter((status) => !KNOWN_STATUSES.has(status));
    if (unknown.length > 0) {
      throw new CodedError(
        CommonErrorCode.ValidationFailed,
        `invalid status filter: ${unknown.join(', ').slice(0, 200)}`,
      );
    }
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
    const bare = filters.message_id_header.trim().replace(/^<|>$/g, '').toLowerCase();
    query.andWhere('message.messageIdHeader = :header', { header: `<${bare}>` });
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
