import { Injectable } from '@nestjs/common';

import { DeliveryConfig } from '../delivery.config';
import { Batcher, type BatcherLimits } from '../worker/batcher';
import {
  type AttemptClaim,
  AttemptsRepository,
  type ClaimKey,
  type OutcomeWrite,
} from './attempts.repository';

/**
 * One statement at a time, without a timer wait: the claims and outcomes asked for while it runs
 * go together in the next (group commit: the busier, the larger the batches). No wait, because a
 * session's message data waits for its claim: a wait would hold its connection idle.
 */
const LANE: BatcherLimits = { maxItems: 100, maxWaitMs: 0, oneAtATime: true };

type LaneItem = { kind: 'claim'; key: ClaimKey } | { kind: 'outcome'; write: OutcomeWrite };

/** A claim's answer (null: another worker holds or did the attempt), or whether an outcome was written. */
type LaneResult = AttemptClaim | null | boolean;

/**
 * The attempts' writes of this replica in one lane: the claims of sessions that just opened and
 * the outcomes of attempts that just ended go in one statement (attempts claimed until a
 * DELIVERY_CLAIM_TTL_MS from the statement; outcomes with their outbox rows). Under load a claim
 * is asked for about every message, so outcomes ride with claims instead of statements of their
 * own. A caller learns its answer once the statement is committed; a failed statement is retried
 * for each claim and outcome alone.
 */
@Injectable()
export class AttemptWrites {
  private readonly lane = new Batcher<LaneItem, LaneResult>(LANE, (items) => this.write(items));

  constructor(
    private readonly attempts: AttemptsRepository,
    private readonly config: DeliveryConfig,
  ) {}

  /** Claims the attempt; null when another worker holds or did it. */
  async claim(key: ClaimKey): Promise<AttemptClaim | null> {
    const claim = await this.lane.add({ kind: 'claim', key });
    return typeof claim === 'boolean' ? null : claim;
  }

  /** Whether the outcome was written (false: the claim was lost, or the attempt exists). */
  async record(write: OutcomeWrite): Promise<boolean> {
    return (await this.lane.add({ kind: 'outcome', write })) === true;
  }

  private async write(items: readonly LaneItem[]): Promise<LaneResult[]> {
    const keys: ClaimKey[] = [];
    const writes: OutcomeWrite[] = [];
    for (const item of items) {
      if (item.kind === 'claim') keys.push(item.key);
      else writes.push(item.write);
    }
    const leaseUntil = new Date(Date.now() + this.config.DELIVERY_CLAIM_TTL_MS);
    const { claims, written } = await this.attempts.claimAndRecord(keys, leaseUntil, writes);
    let claimAt = 0;
    let writeAt = 0;
    return items.map((item) =>
      item.kind === 'claim' ? (claims[claimAt++] ?? null) : written[writeAt++] === true,
    );
  }
}
