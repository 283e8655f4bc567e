import { randomUUID } from 'node:crypto';

import { Injectable } from '@nestjs/common';

import {
  type ClaimResult,
  type IdempotencyClaim,
  IdempotencyRepository,
  type StoredOutcome,
} from './idempotency.repository';
import type { RequestFingerprint } from './idempotency-policy';

/** A claim that keeps losing to a record that vanishes under it is given up after this. */
const MAX_CLAIM_ATTEMPTS = 3;

/** Idempotency records in PostgreSQL, shared by every gateway replica. */
@Injectable()
export class IdempotencyStore {
  constructor(private readonly records: IdempotencyRepository) {}

  async claim(
    accountId: string,
    key: string,
    fingerprint: RequestFingerprint,
    leaseMs: number,
  ): Promise<ClaimResult> {
    // Read first: a replay or an in-progress answer then costs one SELECT instead of a write
    // (the claim's ON CONFLICT locks the live row even when it leaves it unchanged).
    const existing = await this.records.findLive(accountId, key);
    if (existing) return { kind: 'existing', record: existing };
    for (let attempt = 1; ; attempt += 1) {
      const claim = { accountId, key, token: randomUUID() };
      if (await this.records.claim(claim, fingerprint, leaseMs)) return { kind: 'claimed', claim };
      const live = await this.records.findLive(accountId, key);
      if (live) return { kind: 'existing', record: live };
      // The live record expired or was released between the two statements: claim again.
      if (attempt >= MAX_CLAIM_ATTEMPTS) {
        throw new Error('idempotency claim kept racing with a vanishing record');
      }
    }
  }

  /** Stores the outcome; false when the claim was lost (lease expired and taken over). */
  complete(claim: IdempotencyClaim, outcome: StoredOutcome): Promise<boolean> {
    return this.records.complete(claim, outcome);
  }

  /** Keeps the key in progress until its lease ends, storing nothing. */
  hold(claim: IdempotencyClaim): Promise<void> {
    return this.records.hold(claim);
  }

  /** Frees the key at once so a retry executes again. */
  release(claim: IdempotencyClaim): Promise<void> {
    return this.records.release(claim);
  }

  /** Deletes up to `limit` expired records; returns how many. */
  purgeExpired(limit: number): Promise<number> {
    return this.records.deleteExpired(limit);
  }
}
