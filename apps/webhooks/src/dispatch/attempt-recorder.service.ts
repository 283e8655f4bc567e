import { BatchRecorder } from '@envoi/shared-outbound';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import {
  type AttemptRecord,
  DeliveriesRepository,
  type RecordedAttempt,
} from './deliveries.repository';

/** Attempts recorded by one transaction at most. */
export const RECORD_BATCH_MAX = 128;

/**
 * Records attempts in batches: those that end within WEBHOOK_RECORD_WINDOW_MS of the first (or
 * RECORD_BATCH_MAX of them) go in one transaction; those that end while it runs go in the next,
 * at once. One batch at a time per replica. Each caller learns its own attempt's result.
 */
@Injectable()
export class AttemptRecorder implements OnModuleDestroy {
  private readonly batches: BatchRecorder<AttemptRecord, RecordedAttempt>;

  constructor(
    config: WebhooksConfig,
    @Inject(DeliveriesRepository)
    deliveries: Pick<DeliveriesRepository, 'recordAttempts'>,
  ) {
    this.batches = new BatchRecorder({
      windowMs: config.WEBHOOK_RECORD_WINDOW_MS,
      maxBatch: RECORD_BATCH_MAX,
      keyOf: (record) => record.deliveryId,
      recordBatch: (records) =>
        deliveries.recordAttempts(records, config.WEBHOOK_DISABLE_AFTER_FAILURES),
    });
  }

  /** Resolves once the attempt is recorded: null when its lease was lost. */
  record(record: AttemptRecord): Promise<RecordedAttempt | null> {
    return this.batches.record(record);
  }

  onModuleDestroy(): Promise<void> {
    return this.batches.drain();
  }
}
