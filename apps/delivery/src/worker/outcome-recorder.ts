import { enqueueOutbox } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { AttemptsRepository, type OutcomeWrite } from '../attempts/attempts.repository';
import { Batcher, type BatcherLimits } from './batcher';

/**
 * Outcomes gathered into one transaction: the messages of a chunk finish close together, and a
 * few milliseconds' wait costs a message far less than a transaction of its own costs the
 * database. One transaction at a time: those that finish while it runs go in the next.
 */
const RECORD_BATCH: BatcherLimits = { maxItems: 100, maxWaitMs: 5, oneAtATime: true };

/**
 * Records attempt outcomes with their outbox rows (event, maybe the next job). The outcomes that
 * finish close together are written in one transaction of multi-row statements, each attempt
 * still under its own compare-and-set; a caller learns whether its outcome was written only once
 * it is committed, and a failed transaction is retried for each outcome alone.
 */
@Injectable()
export class OutcomeRecorder {
  private readonly batcher = new Batcher<OutcomeWrite, boolean>(RECORD_BATCH, (writes) =>
    this.recordNow(writes),
  );

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly attempts: AttemptsRepository,
  ) {}

  /** Whether the outcome was written (false: the claim was lost, or the attempt exists). */
  record(write: OutcomeWrite): Promise<boolean> {
    return this.batcher.add(write);
  }

  private recordNow(writes: readonly OutcomeWrite[]): Promise<boolean[]> {
    return this.dataSource.transaction(async (manager) => {
      const written = await this.attempts.recordEach(writes, manager);
      const entries = writes.flatMap((write, index) =>
        written[index] ? write.record.entries : [],
      );
      await enqueueOutbox(manager, entries);
      return written;
    });
  }
}
