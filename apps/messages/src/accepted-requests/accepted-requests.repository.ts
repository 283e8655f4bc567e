import type { AcceptSubmissionResult, CreateMessageResult } from '@envoi/contracts-messages';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

/** The send committed under an account's key within the window ($3 ms), if any. */
const FIND_LIVE_SQL = `
  SELECT request_fingerprint AS fingerprint, reply
  FROM messages.accepted_requests
  WHERE account_id = $1 AND idempotency_key = $2
    AND created_at > now() - $3 * interval '1 millisecond'`;

/**
 * Records a send's key, taking over a record past the window ($5 ms). A live record, or one a
 * concurrent transaction has just committed (the primary key waits for it), returns no row.
 */
const INSERT_SQL = `
  INSERT INTO messages.accepted_requests (account_id, idempotency_key, request_fingerprint, reply)
  VALUES ($1, $2, $3, $4)
  ON CONFLICT (account_id, idempotency_key) DO UPDATE
    SET request_fingerprint = EXCLUDED.request_fingerprint, reply = EXCLUDED.reply,
        created_at = now()
    WHERE accepted_requests.created_at <= now() - $5 * interval '1 millisecond'
  RETURNING 1`;

/**
 * Records the key of a request it is unique to (an SMTP submission's), as part of the statement
 * that stores the send: a repeat, or a concurrent duplicate once the first commits, fails the
 * whole statement on the primary key.
 */
const CLAIM_SQL = `
  INSERT INTO messages.accepted_requests (account_id, idempotency_key, request_fingerprint, reply)
  VALUES ($1, $2, $3, $4)`;

/** Deletes up to $1 records past the window ($2 ms), oldest first; replicas skip each other's. */
const PURGE_SQL = `
  WITH purged AS (
    DELETE FROM messages.accepted_requests
    WHERE (account_id, idempotency_key) IN (
      SELECT account_id, idempotency_key FROM messages.accepted_requests
      WHERE created_at <= now() - $2 * interval '1 millisecond'
      ORDER BY created_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

/** What a committed request was answered: an API send's list, or an SMTP submission's result. */
export type AcceptedReply = CreateMessageResult | AcceptSubmissionResult;

/** A send committed under a key: what the request was, and what it was answered. */
export interface AcceptedRequest {
  fingerprint: string;
  reply: AcceptedReply;
}

export interface AcceptedRequestKey {
  accountId: string;
  key: string;
}

/** `messages.accepted_requests`: sends committed under an `Idempotency-Key`. */
@Injectable()
export class AcceptedRequestsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async findLive(owner: AcceptedRequestKey, windowMs: number): Promise<AcceptedRequest | null> {
    const rows = await this.dataSource.query<AcceptedRequest[]>(FIND_LIVE_SQL, [
      owner.accountId,
      owner.key,
      windowMs,
    ]);
    return rows[0] ?? null;
  }

  /** In the send's transaction; false when a live record already holds the key. */
  async insert(
    manager: EntityManager,
    owner: AcceptedRequestKey,
    accepted: AcceptedRequest,
    windowMs: number,
  ): Promise<boolean> {
    const rows = await manager.query<unknown[]>(INSERT_SQL, [
      owner.accountId,
      owner.key,
      accepted.fingerprint,
      JSON.stringify(accepted.reply),
      windowMs,
    ]);
    return rows.length === 1;
  }

  /** The statement that records a key unique to its request (see CLAIM_SQL). */
  claimStatement(
    owner: AcceptedRequestKey,
    accepted: AcceptedRequest,
  ): { sql: string; parameters: unknown[] } {
    return {
      sql: CLAIM_SQL,
      parameters: [
        owner.accountId,
        owner.key,
        accepted.fingerprint,
        JSON.stringify(accepted.reply),
      ],
    };
  }

  async purgeExpired(limit: number, windowMs: number): Promise<number> {
    const rows = await this.dataSource.query<Array<{ purged: number }>>(PURGE_SQL, [
      limit,
      windowMs,
    ]);
    return rows[0]?.purged ?? 0;
  }
}
