import { Injectable } from '@nestjs/common';

import { GatewayDatabase } from '../database/gateway-database';
import type { ExistingRecord, RequestFingerprint } from './idempotency-policy';
import type { IdempotencyState } from './idempotency-record.entity';

/** Identifies one execution's ownership of an account's key. */
export interface IdempotencyClaim {
  accountId: string;
  key: string;
  token: string;
}

export interface StoredRecord extends ExistingRecord {
  statusCode: number | null;
  contentType: string | null;
  responseBody: Buffer | null;
  encrypted: boolean;
}

export type ClaimResult =
  { kind: 'claimed'; claim: IdempotencyClaim } | { kind: 'existing'; record: StoredRecord };

export interface StoredOutcome {
  statusCode: number;
  contentType: string | null;
  body: Buffer;
  encrypted: boolean;
  ttlMs: number;
}

interface RecordRow {
  method: string;
  path: string;
  body_sha256: string;
  state: IdempotencyState;
  seconds_left: number;
  status_code: number | null;
  content_type: string | null;
  response_body: Buffer | null;
  encrypted: boolean;
}

const TABLE = '"gateway"."idempotency_records"';

/**
 * Takes the key unless a live record holds it. One statement, so two concurrent claims of one key
 * can never both win: the loser blocks on the row lock, then sees the winner's live record. An
 * expired record (finished replay lifetime or abandoned lease) is taken over in place.
 */
const CLAIM_SQL = `
  INSERT INTO ${TABLE} AS r
    (account_id, idempotency_key, method, path, body_sha256, state, claim_token, expires_at)
  VALUES ($1, $2, $3, $4, $5, 'executing', $6, clock_timestamp() + $7 * interval '1 millisecond')
  ON CONFLICT (account_id, idempotency_key) DO UPDATE SET
    method = EXCLUDED.method, path = EXCLUDED.path, body_sha256 = EXCLUDED.body_sha256,
    state = 'executing', claim_token = EXCLUDED.claim_token, status_code = NULL,
    content_type = NULL, response_body = NULL, encrypted = false, created_at = now(),
    expires_at = EXCLUDED.expires_at
  WHERE r.expires_at <= clock_timestamp()
  RETURNING claim_token`;

const READ_LIVE_SQL = `
  SELECT method, path, body_sha256, state, status_code, content_type, response_body, encrypted,
         ceil(extract(epoch FROM expires_at - clock_timestamp()))::int AS seconds_left
  FROM ${TABLE}
  WHERE account_id = $1 AND idempotency_key = $2 AND expires_at > clock_timestamp()`;

const COMPLETE_SQL = `
  UPDATE ${TABLE} SET state = 'completed', status_code = $4, content_type = $5,
    response_body = $6, encrypted = $7, expires_at = clock_timestamp() + $8 * interval '1 millisecond'
  WHERE account_id = $1 AND idempotency_key = $2 AND claim_token = $3`;

const HOLD_SQL = `
  UPDATE ${TABLE} SET state = 'held'
  WHERE account_id = $1 AND idempotency_key = $2 AND claim_token = $3`;

const RELEASE_SQL = `
  DELETE FROM ${TABLE} WHERE account_id = $1 AND idempotency_key = $2 AND claim_token = $3`;

const PURGE_SQL = `
  DELETE FROM ${TABLE} WHERE ctid IN (
    SELECT ctid FROM ${TABLE} WHERE expires_at <= clock_timestamp()
    LIMIT $1 FOR UPDATE SKIP LOCKED)`;

/** The statements on "gateway"."idempotency_records". */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly database: GatewayDatabase) {}

  /** Takes the key for this claim's token unless a live record holds it; true when taken. */
  async claim(
    claim: IdempotencyClaim,
    fingerprint: RequestFingerprint,
    leaseMs: number,
  ): Promise<boolean> {
    const claimed = await this.database.query(CLAIM_SQL, [
      claim.accountId,
      claim.key,
      fingerprint.method,
      fingerprint.path,
      fingerprint.bodySha256,
      claim.token,
      leaseMs,
    ]);
    return claimed.rowCount === 1;
  }

  async findLive(accountId: string, key: string): Promise<StoredRecord | undefined> {
    const live = await this.database.query<RecordRow>(READ_LIVE_SQL, [accountId, key]);
    const row = live.rows[0];
    return row ? toStoredRecord(row) : undefined;
  }

  /** Stores the outcome; false when the claim was lost (lease expired and taken over). */
  async complete(claim: IdempotencyClaim, outcome: StoredOutcome): Promise<boolean> {
    const result = await this.database.query(COMPLETE_SQL, [
      claim.accountId,
      claim.key,
      claim.token,
      outcome.statusCode,
      outcome.contentType,
      outcome.body,
      outcome.encrypted,
      outcome.ttlMs,
    ]);
    return result.rowCount === 1;
  }

  async hold(claim: IdempotencyClaim): Promise<void> {
    await this.database.query(HOLD_SQL, [claim.accountId, claim.key, claim.token]);
  }

  async release(claim: IdempotencyClaim): Promise<void> {
    await this.database.query(RELEASE_SQL, [claim.accountId, claim.key, claim.token]);
  }

  /** Deletes up to `limit` expired records; returns how many. */
  async deleteExpired(limit: number): Promise<number> {
    const result = await this.database.query(PURGE_SQL, [limit]);
    return result.rowCount ?? 0;
  }
}

function toStoredRecord(row: RecordRow): StoredRecord {
  return {
    method: row.method,
    path: row.path,
    bodySha256: row.body_sha256,
    state: row.state,
    secondsLeft: row.seconds_left,
    statusCode: row.status_code,
    contentType: row.content_type,
    responseBody: row.response_body,
    encrypted: row.encrypted,
  };
}
