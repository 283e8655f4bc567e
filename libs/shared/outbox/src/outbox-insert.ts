import { currentTraceContext, traceHeaders } from '@envoi/shared-observability';
import type { EntityManager } from 'typeorm';

import type { OutboxEntry } from './outbox';
import { OutboxMessageEntity } from './outbox-message.entity';

/**
 * The INSERT of outbox rows, one array parameter per column whatever the number of rows:
 * PostgreSQL expands them with unnest, in order (`seq` numbers the rows as given). A row without
 * `availableAt` is due at once (`now()`, the column's default); the columns not listed take their
 * defaults (created now, not published, not cancelled, no failed attempt, no error). Every row
 * keeps the current trace context, which the relay publishes as its message headers.
 */
export function outboxInsertStatement(
  table: string,
  entries: readonly OutboxEntry[],
): { sql: string; parameters: unknown[] } {
  const sql =
    `INSERT INTO ${table} (id, stream, subject, payload, available_at, trace) ` +
    'SELECT id, stream, subject, payload, coalesce(available_at, now()), trace ' +
    'FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::timestamptz[], $6::jsonb[]) ' +
    'WITH ORDINALITY AS r(id, stream, subject, payload, available_at, trace, n) ORDER BY n';
  const context = currentTraceContext();
  const trace = context ? JSON.stringify(traceHeaders(context)) : null;
  return {
    sql,
    parameters: [
      entries.map((entry) => entry.id),
      entries.map((entry) => entry.subject.stream),
      entries.map((entry) => entry.subject.name),
      // As TypeORM writes a jsonb column: JSON text, and a missing payload as NULL (refused).
      entries.map((entry) => (entry.payload == null ? null : JSON.stringify(entry.payload))),
      entries.map((entry) => entry.availableAt ?? null),
      entries.map(() => trace),
    ],
  };
}

/** The outbox table of the manager's DataSource (its schema's), quoted. */
export function outboxTable(manager: EntityManager): string {
  const { driver } = manager.connection;
  const { schema, tableName } = manager.connection.getMetadata(OutboxMessageEntity);
  return schema ? `${driver.escape(schema)}.${driver.escape(tableName)}` : driver.escape(tableName);
}
