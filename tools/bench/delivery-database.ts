// What `npm run bench:delivery` reads from PostgreSQL: whether every message reached its final
// status with exactly one attempt, and when each one passed each stage of the pipeline.
import { DELIVERY_STREAM, EVENTS_STREAM } from '@envoi/contracts-core';
import { Client } from 'pg';

import { committedTransactions } from './database-transactions';

const POLL_MS = 200;

/** Where the run's messages stand (ids: bare uuids). */
export interface DeliveryState {
  messages: number;
  /** Messages by status (messages.messages). */
  statuses: Record<string, number>;
  /** Attempt rows (delivery.attempts), finished ones, and messages with more than one. */
  attempts: number;
  attemptsDone: number;
  retried: number;
  /** Finished attempts by status. */
  attemptStatuses: Record<string, number>;
}

/** When one message passed each stage (epoch ms; null: not recorded). */
export interface MessageTimeline {
  id: string;
  /** The accepting transaction (messages.messages.created_at). */
  accepted: number | null;
  /**
   * Its first delivery job (one per chunk of its send) left the messages outbox for the DELIVERY
   * work queue (the relay's transaction start: `published_at = now()`, just before the publish).
   */
  jobPublished: number | null;
  /** A worker claimed attempt 1 (delivery.attempts.started_at: before the message is read). */
  claimed: number | null;
  /** The SMTP session ended (delivery.attempts.finished_at, taken before the outcome's commit). */
  finished: number | null;
  /** The outcome event (alone or in its batch) left the delivery outbox. */
  eventPublished: number | null;
  /** The messages service applied the status (messages.messages.updated_at). */
  statusApplied: number | null;
}

interface TimelineRow {
  id: string;
  accepted: string | null;
  job_published: string | null;
  claimed: string | null;
  finished: string | null;
  event_published: string | null;
  status_applied: string | null;
}

const TIMELINE_SQL = `
WITH ids AS (SELECT unnest($1::uuid[]) AS id),
events AS (
  SELECT event->'data'->>'id' AS id, min(published_at) AS published_at
    FROM delivery.outbox,
         jsonb_array_elements(CASE WHEN payload->'data' ? 'events' THEN payload->'data'->'events'
                                   ELSE jsonb_build_array(payload) END) AS event
   WHERE stream = $3 GROUP BY 1)
SELECT m.id::text AS id,
       extract(epoch FROM m.created_at) * 1000 AS accepted,
       extract(epoch FROM j.published_at) * 1000 AS job_published,
       extract(epoch FROM a.started_at) * 1000 AS claimed,
       extract(epoch FROM a.finished_at) * 1000 AS finished,
       extract(epoch FROM e.published_at) * 1000 AS event_published,
       extract(epoch FROM m.updated_at) * 1000 AS status_applied
  FROM ids
  JOIN messages.messages m ON m.id = ids.id
  LEFT JOIN messages.outbox j ON j.id = m.job_id AND j.stream = $2
  LEFT JOIN events e ON e.id = m.id::text
  LEFT JOIN delivery.attempts a ON a.message_id = m.id AND a.attempt = 1`;

/** The outcome events of the messages in the delivery outbox, and the stream messages they make. */
const OUTCOME_MESSAGES_SQL = `
SELECT count(*)::int AS events, count(DISTINCT outbox.id)::int AS stream_messages
  FROM delivery.outbox AS outbox,
       jsonb_array_elements(CASE WHEN payload->'data' ? 'events' THEN payload->'data'->'events'
                                 ELSE jsonb_build_array(payload) END) AS event
 WHERE outbox.stream = $2 AND event->'data'->>'id' = ANY($1::text[])`;

const toMs = (value: string | null) => (value === null ? null : Number(value));

export class DeliveryDatabase {
  private constructor(private readonly client: Client) {}

  static async connect(url: string): Promise<DeliveryDatabase> {
    const client = new Client({ connectionString: url });
    await client.connect();
    return new DeliveryDatabase(client);
  }

  close(): Promise<void> {
    return this.client.end();
  }

  /** Transactions committed or rolled back in the database so far, every session's. */
  transactions(): Promise<number> {
    return committedTransactions(this.client);
  }

  async state(ids: readonly string[]): Promise<DeliveryState> {
    const statuses = await this.client.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM messages.messages WHERE id = ANY($1::uuid[]) GROUP BY 1',
      [ids],
    );
    const attempts = await this.client.query<{
      state: string;
      status: string | null;
      n: number;
      messages: number;
    }>(
      `SELECT state, status, count(*)::int AS n, count(DISTINCT message_id)::int AS messages
         FROM delivery.attempts WHERE message_id = ANY($1::uuid[]) GROUP BY 1, 2`,
      [ids],
    );
    const retried = await this.client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT message_id FROM delivery.attempts
         WHERE message_id = ANY($1::uuid[]) GROUP BY 1 HAVING count(*) > 1) more`,
      [ids],
    );
    const attemptStatuses: Record<string, number> = {};
    for (const row of attempts.rows) {
      if (row.state === 'done') {
        const key = row.status ?? '?';
        attemptStatuses[key] = (attemptStatuses[key] ?? 0) + row.n;
      }
    }
    return {
      messages: statuses.rows.reduce((sum, row) => sum + row.n, 0),
      statuses: Object.fromEntries(statuses.rows.map((row) => [row.status, row.n])),
      attempts: attempts.rows.reduce((sum, row) => sum + row.n, 0),
      attemptsDone: attempts.rows
        .filter((row) => row.state === 'done')
        .reduce((sum, row) => sum + row.n, 0),
      retried: retried.rows[0]?.n ?? 0,
      attemptStatuses,
    };
  }

  /**
   * Polls until every message has the status `status` and every attempt is finished, or until
   * `timeoutMs`; returns the last state and how long it took (null: not within the time).
   */
  async waitForStatus(
    ids: readonly string[],
    status: string,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ state: DeliveryState; waitedMs: number | null }> {
    const started = performance.now();
    for (;;) {
      signal.throwIfAborted();
      const state = await this.state(ids);
      const waited = performance.now() - started;
      if (state.statuses[status] === ids.length && state.attemptsDone === state.attempts) {
        return { state, waitedMs: waited };
      }
      if (waited >= timeoutMs) return { state, waitedMs: null };
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /**
   * Polls until the messages outbox holds nothing unpublished (every delivery job is in the
   * DELIVERY work queue); false when it still does after `timeoutMs`.
   */
  async waitForJobsPublished(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    const started = performance.now();
    for (;;) {
      signal.throwIfAborted();
      const result = await this.client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM messages.outbox WHERE published_at IS NULL AND cancelled_at IS NULL',
      );
      if ((result.rows[0]?.n ?? 0) === 0) return true;
      if (performance.now() - started >= timeoutMs) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /**
   * The outcome events of the messages (alone or in batches) per EVENTS stream message the
   * delivery outbox queued for them; null when it has none of them.
   */
  async outcomeEventsPerStreamMessage(ids: readonly string[]): Promise<number | null> {
    const result = await this.client.query<{ events: number; stream_messages: number }>(
      OUTCOME_MESSAGES_SQL,
      [ids, EVENTS_STREAM],
    );
    const row = result.rows[0];
    return row && row.stream_messages > 0 ? row.events / row.stream_messages : null;
  }

  async timelines(ids: readonly string[]): Promise<MessageTimeline[]> {
    const result = await this.client.query<TimelineRow>(TIMELINE_SQL, [
      ids,
      DELIVERY_STREAM,
      EVENTS_STREAM,
    ]);
    return result.rows.map((row) => ({
      id: row.id,
      accepted: toMs(row.accepted),
      jobPublished: toMs(row.job_published),
      claimed: toMs(row.claimed),
      finished: toMs(row.finished),
      eventPublished: toMs(row.event_published),
      statusApplied: toMs(row.status_applied),
    }));
  }
}
