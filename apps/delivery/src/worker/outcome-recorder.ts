import { Injectable } from '@nestjs/common';

import { AttemptsRepository, type OutcomeWrite } from '../attempts/attempts.repository';
import { Batcher, type BatcherLimits } from './batcher';

/**
 * Outcomes gathered into one statement: the messages of a chunk finish close together, and a
 * few milliseconds' wait costs a message far less than a statement of its own costs the
 * database. One statement at a time: those that finish while it runs go in the next.
 */
const RECORD_BATCH: BatcherLimits = { maxItems: 100, maxWaitMs: 5, oneAtATime: true };

/**
 * Records attempt outcomes with their outbox rows (event, maybe the next job). The outcomes that
 * finish close together are written in one statement (atomic on its own), each attempt still
 * under its own compare-and-set, with the outbox rows of those written; a caller learns whether
 * its outcome was written only once it is committed, and a failed statement is retried for each
 * outcome alone.
 */
@Injectable()
export class OutcomeRecorder {
  private readonly batcher = new Batcher<OutcomeWrite, boolean>(RECORD_BATCH, (writes) =>
    this.attempts.recordWithOutbox(writes),
  );

  constructor(private readonly attempts: AttemptsRepository) {}

  /** Whether the outcome was written (false: the claim was lost, or the attempt exists). */
  record(write: OutcomeWrite): Promise<boolean> {
    return this.batcher.add(write);
  }
}
