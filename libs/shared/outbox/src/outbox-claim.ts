import { preparedQuery } from '@envoi/shared-database';
import type { EntityManager } from 'typeorm';

import { OUTBOX_BATCH_KEY } from './outbox';

/** One stream message of a claimed row (a row carries one, or several when it is a batch). */
export interface ClaimedMessage {
  rowId: string;
  stream: string;
  subject: string;
  /** Its `Nats-Msg-Id`: the row's id, or the event's own in a batch row. */
  msgId: string;
  /** The message body, JSON as PostgreSQL writes it (never parsed here). */
  data: string;
  trace: Record<string, string> | null;
}

/**
 * Locks at most `$2` of the oldest due rows (published nowhere, not cancelled, due) that other
 * relays have not locked, and returns the messages of those that hold `$1` stream messages (at
 * least one row, whatever its size) in publication order: rows by due time then insertion, a
 * batch row's events in their order. PostgreSQL expands batch rows and writes the JSON. Every
 * locked row's payload is read to count its messages, so `$2` should be about the rows `$1`
 * messages need, not `$1`: a row beyond them is read and locked for nothing.
 */
export function claimStatement(table: string): string {
  return `WITH due AS (
      SELECT id, seq, available_at, stream, subject, payload, trace,
             coalesce(jsonb_array_length(${batchEvents('payload')}), 1) AS messages
        FROM ${table}
       WHERE published_at IS NULL AND cancelled_at IS NULL AND available_at <= now()
       ORDER BY available_at, seq
       LIMIT $2
         FOR UPDATE SKIP LOCKED),
    taken AS (
      SELECT *, sum(messages) OVER (ORDER BY available_at, seq) - messages AS before FROM due)
    SELECT t.id AS "rowId", t.stream, t.subject, t.trace,
           coalesce(e.event->>'id', t.id::text) AS "msgId", coalesce(e.event, t.payload)::text AS data
      FROM taken t
      LEFT JOIN LATERAL jsonb_array_elements(${batchEvents('t.payload')})
           WITH ORDINALITY AS e(event, n) ON true
     WHERE t.before < $1
     ORDER BY t.available_at, t.seq, e.n`;
}

/** A batch row's events (a JSON array), NULL for a row of one message. */
function batchEvents(payload: string): string {
  const events = `${payload}->'${OUTBOX_BATCH_KEY}'`;
  return `CASE WHEN jsonb_typeof(${events}) = 'array' THEN ${events} END`;
}

export async function claimDueMessages(
  manager: EntityManager,
  table: string,
  maxMessages: number,
  maxRows: number,
): Promise<ClaimedMessage[]> {
  // Run for every batch: prepared once per connection.
  return preparedQuery<ClaimedMessage>(manager, claimStatement(table), [maxMessages, maxRows]);
}

export async function markPublished(
  manager: EntityManager,
  table: string,
  rowIds: readonly string[],
): Promise<void> {
  if (rowIds.length === 0) return;
  await preparedQuery(
    manager,
    `UPDATE ${table} SET published_at = now() WHERE id = ANY($1::uuid[])`,
    [rowIds],
  );
}

export async function recordFailure(
  manager: EntityManager,
  table: string,
  rowId: string,
  error: string,
): Promise<void> {
  await manager.query(
    `UPDATE ${table} SET failed_attempts = failed_attempts + 1, last_error = $2 WHERE id = $1`,
    [rowId, error.slice(0, 1_000)],
  );
}
