import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { MESSAGES_SCHEMA } from '../database/data-source-options';
import {
  type Columns,
  insertRows,
  insertRowsStatement,
  type InsertStatement,
} from '../messages/insert-rows';

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

/** The counter a hit raises. */
export type HitCounter = 'open_count' | 'click_count';

/** The message fields an open or click event carries, and its counters after the hit. */
export interface HitMessage {
  id: string;
  account_id: string;
  sender: string;
  recipient: string;
  subject: string;
  message_id_header: string;
  count: number;
}

/** The tracked links of messages and the messages' open and click counters. */
@Injectable()
export class TrackingRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One INSERT of every tracked link of the send (nothing when none). */
  async insertLinks(
    rows: readonly TrackedLinkRow[],
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    await insertRows(manager, `${MESSAGES_SCHEMA}.tracked_links`, TRACKED_LINK_COLUMNS, rows);
  }

  /** The INSERT of {@link insertLinks}, or none without rows. */
  insertLinksStatements(rows: readonly TrackedLinkRow[]): InsertStatement[] {
    return rows.length === 0
      ? []
      : [insertRowsStatement(`${MESSAGES_SCHEMA}.tracked_links`, TRACKED_LINK_COLUMNS, rows)];
  }

  /**
   * The URL stored for the message's link at `position`: its own (templated HTML, or a message
   * stored before sends were) or its send's; undefined when there is none.
   */
  async linkUrl(messageId: string, position: number): Promise<string | undefined> {
    const links = await this.dataSource.query<Array<{ url: string }>>(
      `SELECT url FROM ${MESSAGES_SCHEMA}.tracked_links WHERE message_id = $1 AND position = $2
       UNION ALL
       SELECT link.url FROM ${MESSAGES_SCHEMA}.send_links AS link
         JOIN ${MESSAGES_SCHEMA}.messages AS message ON message.send_id = link.send_id
        WHERE message.id = $1 AND link.position = $2
       LIMIT 1`,
      [messageId, position],
    );
    return links[0]?.url;
  }

  /** Counts one hit (open or click) of a message and returns its fields; null when it is gone. */
  async countHit(
    messageId: string,
    counter: HitCounter,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<HitMessage | null> {
    // A CTE, so that the driver answers rows (an UPDATE's own answer is [rows, count]).
    const rows = await manager.query<HitMessage[]>(
      `WITH hit AS (
         UPDATE messages.messages SET ${counter} = ${counter} + 1, updated_at = now()
          WHERE id = $1
          RETURNING id, account_id, sender, recipient, subject, message_id_header, ${counter} AS count
       ) SELECT * FROM hit`,
      [messageId],
    );
    return rows[0] ?? null;
  }
}
