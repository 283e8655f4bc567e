import { randomUUID } from 'node:crypto';

import type { InboundEnvelope } from '@envoi/contracts-routes';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

/** Mail that matched nothing, as kept for inspection. */
export interface UnmatchedMail {
  envelope: InboundEnvelope;
  kind: 'bounce' | 'feedback';
  /** The bounce or feedback address it came to. */
  recipient: string;
  reason: string;
  /** Its first bytes; null when the spool could not be read. */
  content: Buffer | null;
}

/** The inbound_reports and inbound_unmatched tables, in plain SQL. */
@Injectable()
export class InboundReportsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Claims the report for the message in the caller's transaction; false: applied before. */
  async claim(
    manager: EntityManager,
    inboundId: string,
    messageId: string,
    outcome: string,
  ): Promise<boolean> {
    const rows = await manager.query<unknown[]>(
      `INSERT INTO delivery.inbound_reports (inbound_id, message_id, outcome) VALUES ($1, $2, $3)
       ON CONFLICT DO NOTHING RETURNING inbound_id`,
      [inboundId, messageId, outcome],
    );
    return rows.length > 0;
  }

  /** The attempt number an asynchronous report takes: after every attempt of the message. */
  async nextAttempt(manager: EntityManager, messageId: string): Promise<number> {
    const rows = await manager.query<Array<{ next: number }>>(
      'SELECT coalesce(max(attempt), 0) + 1 AS next FROM delivery.attempts WHERE message_id = $1',
      [messageId],
    );
    return rows[0]?.next ?? 1;
  }

  /** Keeps the mail once per inbound id and address (a redelivered event stores nothing more). */
  async storeUnmatched(mail: UnmatchedMail): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO delivery.inbound_unmatched (id, inbound_id, kind, reason, envelope_from,
         recipient, spool_name, size, content, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (inbound_id, recipient) DO NOTHING`,
      [
        randomUUID(),
        mail.envelope.inbound_id,
        mail.kind,
        mail.reason.slice(0, 2_000),
        mail.envelope.envelope_from.slice(0, 320),
        mail.recipient.slice(0, 320),
        mail.envelope.spool.name.slice(0, 255),
        mail.envelope.size,
        mail.content,
        validDate(mail.envelope.received_at),
      ],
    );
  }

  /** Deletes up to `limit` unmatched mails stored before `before`; how many. */
  purgeUnmatched(before: Date, limit: number): Promise<number> {
    return this.purge('inbound_unmatched', 'stored_at', before, limit);
  }

  /** Deletes up to `limit` records of reports applied before `before`; how many. */
  purgeReports(before: Date, limit: number): Promise<number> {
    return this.purge('inbound_reports', 'handled_at', before, limit);
  }

  private async purge(
    table: 'inbound_unmatched' | 'inbound_reports',
    column: 'stored_at' | 'handled_at',
    before: Date,
    limit: number,
  ): Promise<number> {
    const rows = await this.dataSource.query<unknown[]>(
      `WITH doomed AS (
         SELECT ctid FROM delivery.${table} WHERE ${column} < $1 LIMIT $2
       )
       DELETE FROM delivery.${table} WHERE ctid IN (SELECT ctid FROM doomed) RETURNING 1`,
      [before, limit],
    );
    return rows.length;
  }
}

/** The MX's time, or now when it sent none that parses. */
function validDate(value: string): Date {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? new Date() : date;
}
