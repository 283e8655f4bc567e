import { preparedQuery } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

import { MESSAGES_SCHEMA } from '../database/data-source-options';
import type { MessageEntity } from './message.entity';
import type { SendEntity } from './send.entity';
import type { SendAttachmentEntity } from './send-attachment.entity';
import { type SendContent, sourcesOf } from './sends.repository';

/** The columns of a message that its delivery view and its recipient part are made of. */
export type DeliveryMessage = Pick<
  MessageEntity,
  | 'id'
  | 'sendId'
  | 'messageIdHeader'
  | 'accountId'
  | 'domainId'
  | 'domain'
  | 'sender'
  | 'subject'
  | 'recipient'
  | 'recipientName'
  | 'substitutions'
  | 'envelopeRecipients'
  | 'status'
  | 'sandbox'
  | 'sandboxResult'
  | 'firstAttemptAt'
  | 'expiresAt'
  | 'trackOpens'
  | 'trackClicks'
  | 'contentPurgedAt'
>;

const MESSAGES_SQL = `SELECT id, send_id AS "sendId", message_id_header AS "messageIdHeader",
  account_id AS "accountId", domain_id AS "domainId", domain, sender, subject, recipient,
  recipient_name AS "recipientName", substitutions, envelope_recipients AS "envelopeRecipients",
  status, sandbox, sandbox_result AS "sandboxResult", first_attempt_at AS "firstAttemptAt",
  expires_at AS "expiresAt", track_opens AS "trackOpens", track_clicks AS "trackClicks",
  content_purged_at AS "contentPurgedAt"
FROM ${MESSAGES_SCHEMA}.messages WHERE id = ANY($1::uuid[])`;

/** A send's row with how many attachments it has (read only when it has some). */
type SendRow = SendEntity & { attachmentCount: number };

const SEND_SQL = `SELECT id, account_id AS "accountId", kind, api, accepted_at AS "acceptedAt",
  from_address AS "fromAddress", reply_to AS "replyTo", to_addresses AS "toAddresses",
  cc_addresses AS "ccAddresses", subject, text_content AS "textContent",
  html_content AS "htmlContent", amp_content AS "ampContent", headers, substitutions, templated,
  raw_content AS "rawContent", message_id_header AS "messageIdHeader", purge_at AS "purgeAt",
  purged_at AS "purgedAt", retain_until AS "retainUntil",
  (SELECT count(*)::int FROM ${MESSAGES_SCHEMA}.send_attachments a WHERE a.send_id = s.id)
    AS "attachmentCount"
FROM ${MESSAGES_SCHEMA}.sends s WHERE id = $1`;

const ATTACHMENTS_SQL = `SELECT send_id AS "sendId", position, file_name AS "fileName",
  content_type AS "contentType", content_id AS "contentId",
  content_disposition AS "contentDisposition", content
FROM ${MESSAGES_SCHEMA}.send_attachments WHERE send_id = $1 ORDER BY position`;

/**
 * The reads of the delivery views' replies (asked for every job a delivery worker pulls): fixed
 * statements, prepared, of the columns the replies need (not TypeORM's query building and
 * entity hydration of every column).
 */
@Injectable()
export class DeliveryViewReads {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The messages of `ids` that exist, in the order of `ids`. */
  async messages(ids: readonly string[]): Promise<DeliveryMessage[]> {
    const found = await preparedQuery<DeliveryMessage>(this.dataSource.manager, MESSAGES_SQL, [
      [...ids],
    ]);
    const byId = new Map(found.map((message) => [message.id, message]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** What the send's messages are made of; undefined when it is gone or purged. */
  async sendContent(sendId: string): Promise<SendContent | undefined> {
    const [send] = await preparedQuery<SendRow>(this.dataSource.manager, SEND_SQL, [sendId]);
    if (!send || send.purgedAt !== null) return undefined;
    if (send.rawContent !== null) return send.rawContent;
    const attachments =
      send.attachmentCount === 0
        ? []
        : await preparedQuery<SendAttachmentEntity>(this.dataSource.manager, ATTACHMENTS_SQL, [
            sendId,
          ]);
    return sourcesOf(send, attachments);
  }
}
