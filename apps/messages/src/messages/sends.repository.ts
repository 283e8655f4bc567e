import type { AttachmentBody } from '@envoi/contracts-messages';
import type { SendSources } from '@envoi/shared-composition';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { MESSAGES_SCHEMA } from '../database/data-source-options';
import { type Columns, insertRowsStatement, type InsertStatement } from './insert-rows';
import { SendEntity } from './send.entity';
import { SendAttachmentEntity } from './send-attachment.entity';

/** A send row as accept writes it. */
export type SendRow = SendEntity;

/** An attachment row as accept writes it. */
export type SendAttachmentRow = Omit<SendAttachmentEntity, 'send'>;

/** A tracked link shared by every message of a send. */
export interface SendLinkRow {
  sendId: string;
  position: number;
  url: string;
}

const SEND_COLUMNS: Columns<SendRow> = {
  id: ['uuid', (row) => row.id],
  account_id: ['uuid', (row) => row.accountId],
  kind: ['text', (row) => row.kind],
  api: ['text', (row) => row.api],
  accepted_at: ['timestamptz', (row) => row.acceptedAt],
  from_address: ['jsonb', (row) => row.fromAddress],
  reply_to: ['jsonb', (row) => row.replyTo],
  to_addresses: ['jsonb', (row) => row.toAddresses],
  cc_addresses: ['jsonb', (row) => row.ccAddresses],
  subject: ['text', (row) => row.subject],
  text_content: ['text', (row) => row.textContent],
  html_content: ['text', (row) => row.htmlContent],
  amp_content: ['text', (row) => row.ampContent],
  headers: ['json', (row) => row.headers],
  substitutions: ['json', (row) => row.substitutions],
  templated: ['boolean', (row) => row.templated],
  raw_content: ['bytea', (row) => row.rawContent],
  message_id_header: ['text', (row) => row.messageIdHeader],
  purge_at: ['timestamptz', (row) => row.purgeAt],
  purged_at: ['timestamptz', (row) => row.purgedAt],
  retain_until: ['timestamptz', (row) => row.retainUntil],
};

const ATTACHMENT_COLUMNS: Columns<SendAttachmentRow> = {
  send_id: ['uuid', (row) => row.sendId],
  position: ['integer', (row) => row.position],
  file_name: ['text', (row) => row.fileName],
  content_type: ['text', (row) => row.contentType],
  content_id: ['text', (row) => row.contentId],
  content_disposition: ['text', (row) => row.contentDisposition],
  content: ['bytea', (row) => row.content],
};

const LINK_COLUMNS: Columns<SendLinkRow> = {
  send_id: ['uuid', (row) => row.sendId],
  position: ['integer', (row) => row.position],
  url: ['text', (row) => row.url],
};

/** The attachment as the request gave it (its bytes as base64), for composition. */
function attachmentBody(row: SendAttachmentEntity): AttachmentBody {
  return {
    data: row.content.toString('base64'),
    base64: true,
    content_type: row.contentType,
    file_name: row.fileName,
    ...(row.contentId !== null ? { content_id: row.contentId } : {}),
    ...(row.contentDisposition !== null ? { content_disposition: row.contentDisposition } : {}),
  };
}

/** What the send's messages are composed from; undefined once its content is purged. */
export function sourcesOf(
  send: SendEntity,
  attachments: readonly SendAttachmentEntity[],
): SendSources | undefined {
  if (send.purgedAt !== null || send.subject === null) return undefined;
  return {
    kind: send.kind,
    acceptedAt: send.acceptedAt,
    from: send.fromAddress,
    ...(send.replyTo ? { replyTo: send.replyTo } : {}),
    ...(send.toAddresses ? { to: send.toAddresses } : {}),
    ...(send.ccAddresses ? { cc: send.ccAddresses } : {}),
    templates: {
      subject: send.subject,
      ...(send.textContent !== null ? { text: send.textContent } : {}),
      ...(send.htmlContent !== null ? { html: send.htmlContent } : {}),
      ...(send.ampContent !== null ? { amp: send.ampContent } : {}),
    },
    headers: send.headers ?? {},
    ...(send.substitutions ? { substitutions: send.substitutions } : {}),
    templated: send.templated,
    attachments: [...attachments].sort((a, b) => a.position - b.position).map(attachmentBody),
  };
}

/**
 * What a send's messages are made of: its sources, composed per message, or, for a send
 * submitted over SMTP, the raw message every one of them delivers as it is.
 */
export type SendContent = SendSources | Buffer;

/** Sends stored once per request (messages.sends, send_attachments, send_links). */
@Injectable()
export class SendsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The send, its attachments and its shared tracked links: one INSERT per table. */
  async insert(
    send: SendRow,
    attachments: readonly SendAttachmentRow[],
    links: readonly SendLinkRow[],
    manager: EntityManager,
  ): Promise<void> {
    for (const { sql, parameters } of this.insertStatements(send, attachments, links)) {
      await manager.query(sql, parameters);
    }
  }

  /** The INSERTs of {@link insert}, one per table that has rows, to run as the caller decides. */
  insertStatements(
    send: SendRow,
    attachments: readonly SendAttachmentRow[],
    links: readonly SendLinkRow[],
  ): InsertStatement[] {
    return [
      insertRowsStatement(`${MESSAGES_SCHEMA}.sends`, SEND_COLUMNS, [send]),
      ...(attachments.length === 0
        ? []
        : [
            insertRowsStatement(
              `${MESSAGES_SCHEMA}.send_attachments`,
              ATTACHMENT_COLUMNS,
              attachments,
            ),
          ]),
      ...(links.length === 0
        ? []
        : [insertRowsStatement(`${MESSAGES_SCHEMA}.send_links`, LINK_COLUMNS, links)]),
    ];
  }

  /** What the send's messages are made of; undefined when it is gone or purged. */
  async findContent(sendId: string): Promise<SendContent | undefined> {
    const send = await this.dataSource.manager.findOneBy(SendEntity, { id: sendId });
    if (!send || send.purgedAt !== null) return undefined;
    if (send.rawContent !== null) return send.rawContent;
    const attachments = await this.dataSource.manager.findBy(SendAttachmentEntity, { sendId });
    return sourcesOf(send, attachments);
  }
}
