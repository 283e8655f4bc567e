import { createHash } from 'node:crypto';

import { ApiError } from '../errors/api-error';
import type { IdempotencyMode } from '../http/edge-route';
import type { IdempotencyState } from './idempotency-record.entity';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export const IDEMPOTENCY_MESSAGES = {
  invalidKey: `Idempotency-Key must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
  inProgress: 'a request with this idempotency key is in progress',
  mismatch: 'idempotency key was already used with a different request payload',
} as const;

/** What a request is matched on besides account and key (spec 8). */
export interface RequestFingerprint {
  method: string;
  /** The resolved path, path parameters included, without the query string. */
  path: string;
  bodySha256: string;
}

export function requestFingerprint(method: string, url: string, body: Buffer): RequestFingerprint {
  const queryStart = url.indexOf('?');
  return {
    method: method.toUpperCase(),
    path: queryStart === -1 ? url : url.slice(0, queryStart),
    bodySha256: createHash('sha256').update(body).digest('hex'),
  };
}

/**
 * The fingerprint as one SHA-256 (hex), for a service that commits the key with its work and must
 * tell a retry from another request under the same key.
 */
export function fingerprintDigest(fingerprint: RequestFingerprint): string {
  return createHash('sha256')
    .update(`${fingerprint.method}\n${fingerprint.path}\n${fingerprint.bodySha256}`)
    .digest('hex');
}

/** The header's value, or undefined when absent; 400 when it is not 1–255 characters. */
export function readIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || header.length === 0) {
    throw new ApiError(400, IDEMPOTENCY_MESSAGES.invalidKey);
  }
  if (header.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ApiError(400, IDEMPOTENCY_MESSAGES.invalidKey);
  }
  return header;
}

/** A live record found where a claim was attempted. */
export interface ExistingRecord extends RequestFingerprint {
  state: IdempotencyState;
  secondsLeft: number;
}

export type ExistingRecordVerdict =
  { kind: 'mismatch' } | { kind: 'in-progress'; retryAfterSeconds: number } | { kind: 'replay' };

/**
 * How to answer a request whose key is already live: 422 for another method, path or body; 409
 * while executing (retry in a second) or held after a secret-bearing 4xx (retry when the lease
 * ends); otherwise replay the stored outcome.
 */
export function judgeExistingRecord(
  record: ExistingRecord,
  fingerprint: RequestFingerprint,
): ExistingRecordVerdict {
  if (
    record.method !== fingerprint.method ||
    record.path !== fingerprint.path ||
    record.bodySha256 !== fingerprint.bodySha256
  ) {
    return { kind: 'mismatch' };
  }
  if (record.state === 'executing') return { kind: 'in-progress', retryAfterSeconds: 1 };
  if (record.state === 'held') {
    return { kind: 'in-progress', retryAfterSeconds: Math.max(1, record.secondsLeft) };
  }
  return { kind: 'replay' };
}

/** What becomes of a claimed key once the response status is known (spec 7.5 and 8). */
export type OutcomeAction =
  | { kind: 'store'; encrypted: boolean }
  /** 5xx, handler failure or a service's 422: nothing stored, a retry executes again. */
  | { kind: 'release' }
  /** A 4xx of a secret-bearing creation: not stored, the key stays in progress until the lease ends. */
  | { kind: 'hold' };

export function outcomeAction(mode: IdempotencyMode, status: number): OutcomeAction {
  if (status >= 500) return { kind: 'release' };
  if (mode === 'secret') {
    return status >= 200 && status < 300 ? { kind: 'store', encrypted: true } : { kind: 'hold' };
  }
  // A 422 (spec 7.3) says a service committed the key with another request (sends do): like the
  // edge's own 422, it leaves the key to that request.
  if (status === 422) return { kind: 'release' };
  return { kind: 'store', encrypted: false };
}
