// What `npm run bench:send` reads from PostgreSQL: the relay's backlog, and whether every
// answered message was stored (and what storing it cost).
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { Client } from 'pg';

import { BARE_ACCEPT_TABLE } from './bare-accept.constants';

/**
 * Outbox rows the relay has not published yet (cancelled ones never will be), and how long the
 * oldest due one has waited since it was committed or came due: how far the relay is behind.
 */
const UNPUBLISHED_SQL = `SELECT count(*)::int AS n,
    coalesce(extract(epoch FROM clock_timestamp()
      - min(greatest(created_at, available_at)) FILTER (WHERE available_at <= now())), 0)::float8
      * 1000 AS lag_ms
  FROM messages.outbox WHERE published_at IS NULL AND cancelled_at IS NULL`;
const POLL_MS = 20;

export interface StoredCheck {
  /** Message ids the benchmark saw in 202 answers. */
  answered: number;
  /** Rows the table holds for the run (the account's, or the whole scratch table). */
  rows: number;
  /** Answered ids without a row: accepted and lost. Must be 0. */
  lost: number;
  /**
   * Rows no answer was seen for: requests cut off when a load run stopped, which the server
   * finished anyway (at most one request per connection per run).
   */
  unanswered: number;
}

export interface EnvoiStorage extends StoredCheck {
  /** Content rows of the account's messages (one per message). */
  contents: number;
  /**
   * Outbox rows: a send's reception batch, its receptions event and a delivery job per chunk of
   * it (a row of an older design may carry several stream messages).
   */
  outboxRows: number;
  /**
   * Stream messages the outbox rows carry: a reception batch per send (up to 100 messages'
   * `message.reception` events) and a job per chunk.
   */
  outboxMessages: number;
  /** `message.reception_batch` events. */
  receptionBatches: number;
  /** The `message.reception` events those batches carry: one per stored message. */
  batchedReceptions: number;
  /** `message.send_receptions` events (none since usage counts reception batches). */
  sendReceptionEvents: number;
  /** Delivery jobs of the stored messages (a send's chunk shares one). */
  deliveryJobs: number;
  outboxUnpublished: number;
  /** Bytes of the messages schema's tables (with indexes and TOAST) per stored message. */
  bytesPerMessage: Record<string, number>;
}

export class SendDatabase {
  private constructor(private readonly client: Client) {}

  static async connect(url: string): Promise<SendDatabase> {
    const client = new Client({ connectionString: url });
    await client.connect();
    return new SendDatabase(client);
  }

  close(): Promise<void> {
    return this.client.end();
  }

  async unpublishedOutboxRows(): Promise<{ rows: number; lagMs: number }> {
    const result = await this.client.query<{ n: number; lag_ms: number }>(UNPUBLISHED_SQL);
    return { rows: result.rows[0]?.n ?? 0, lagMs: result.rows[0]?.lag_ms ?? 0 };
  }

  /**
   * Polls until the relay has published everything or `timeoutMs` passed; returns the rows left
   * at the start and how long the oldest of them had waited, how long draining took (null: not
   * within the time) and the rows left.
   */
  async waitForRelay(
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ backlog: number; lagMs: number; drainMs: number | null; left: number }> {
    const started = Date.now();
    const { rows: backlog, lagMs } = await this.unpublishedOutboxRows();
    let left = backlog;
    while (left > 0 && Date.now() - started < timeoutMs) {
      signal.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      left = (await this.unpublishedOutboxRows()).rows;
    }
    return { backlog, lagMs, drainMs: left === 0 ? Date.now() - started : null, left };
  }

  async envoiStorage(accountId: string, answered: ReadonlySet<string>): Promise<EnvoiStorage> {
    const ids = [...answered];
    const counts = await this.client.query<{
      rows: number;
      found: number;
      contents: number;
      jobs: number;
    }>(
      `SELECT count(*)::int AS rows,
              count(DISTINCT m.job_id)::int AS jobs,
              count(*) FILTER (WHERE m.id = ANY($2::uuid[]))::int AS found,
              count(*) FILTER (WHERE c.message_id IS NOT NULL OR m.send_id IS NOT NULL)::int
                AS contents
         FROM messages.messages m
         LEFT JOIN messages.message_contents c ON c.message_id = m.id
        WHERE m.account_id = $1`,
      [accountId, ids],
    );
    const outbox = await this.client.query<{
      total: number;
      messages: number;
      send_receptions: number;
      reception_batches: number;
      batched_receptions: number;
      unpublished: number;
    }>(
      `SELECT count(*)::int AS total,
              sum(coalesce(jsonb_array_length(payload->'$events'), 1))::int AS messages,
              count(*) FILTER (WHERE subject = $1)::int AS send_receptions,
              count(*) FILTER (WHERE subject = $2)::int AS reception_batches,
              coalesce(sum(jsonb_array_length(payload->'data'->'events')) FILTER (WHERE subject = $2), 0)::int
                AS batched_receptions,
              count(*) FILTER (WHERE published_at IS NULL AND cancelled_at IS NULL)::int AS unpublished
         FROM messages.outbox`,
      [MessagesStreamSubjects.sendReceptions.name, MessagesStreamSubjects.receptionBatch.name],
    );
    const sizes = await this.client.query<{ name: string; bytes: string }>(
      `SELECT c.relname AS name, pg_total_relation_size(c.oid)::text AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'messages' AND c.relkind = 'r'`,
    );
    const { rows = 0, found = 0, contents = 0, jobs = 0 } = counts.rows[0] ?? {};
    const bytesPerMessage: Record<string, number> = {};
    for (const size of sizes.rows) {
      if (rows > 0) bytesPerMessage[size.name] = Math.round(Number(size.bytes) / rows);
    }
    return {
      answered: ids.length,
      rows,
      lost: ids.length - found,
      unanswered: rows - found,
      contents,
      outboxRows: outbox.rows[0]?.total ?? 0,
      outboxMessages: outbox.rows[0]?.messages ?? 0,
      outboxUnpublished: outbox.rows[0]?.unpublished ?? 0,
      sendReceptionEvents: outbox.rows[0]?.send_receptions ?? 0,
      receptionBatches: outbox.rows[0]?.reception_batches ?? 0,
      batchedReceptions: outbox.rows[0]?.batched_receptions ?? 0,
      deliveryJobs: jobs,
      bytesPerMessage,
    };
  }

  async bareStorage(answered: ReadonlySet<string>): Promise<StoredCheck> {
    const ids = [...answered];
    const counts = await this.client.query<{ rows: number; found: number }>(
      `SELECT count(*)::int AS rows, count(*) FILTER (WHERE id = ANY($1::uuid[]))::int AS found
         FROM ${BARE_ACCEPT_TABLE}`,
      [ids],
    );
    const { rows = 0, found = 0 } = counts.rows[0] ?? {};
    return { answered: ids.length, rows, lost: ids.length - found, unanswered: rows - found };
  }
}
