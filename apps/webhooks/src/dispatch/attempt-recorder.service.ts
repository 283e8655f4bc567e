import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import {
  type AttemptRecord,
  DeliveriesRepository,
  type RecordedAttempt,
} from './deliveries.repository';

/** Attempts recorded by one transaction at most. */
export const RECORD_BATCH_MAX = 128;

interface Waiting {
  record: AttemptRecord;
  resolve: (recorded: RecordedAttempt | null) => void;
  reject: (error: unknown) => void;
}

/**
 * Records attempts in batches: those that end within WEBHOOK_RECORD_WINDOW_MS of the first (or
 * RECORD_BATCH_MAX of them) go in one transaction; those that end while it runs go in the next,
 * at once. One batch at a time per replica. Each caller learns its own attempt's result.
 */
@Injectable()
export class AttemptRecorder implements OnModuleDestroy {
  private waiting: Waiting[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly config: WebhooksConfig,
    @Inject(DeliveriesRepository)
    private readonly deliveries: Pick<DeliveriesRepository, 'recordAttempts'>,
  ) {}

  /** Resolves once the attempt is recorded: null when its lease was lost. */
  record(record: AttemptRecord): Promise<RecordedAttempt | null> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ record, resolve, reject });
      this.schedule();
    });
  }

  async onModuleDestroy(): Promise<void> {
    while (this.flushing || this.waiting.length > 0) await this.flush();
  }

  private schedule(): void {
    if (this.flushing) return;
    if (this.waiting.length >= RECORD_BATCH_MAX) {
      void this.flush();
      return;
    }
    this.timer ??= setTimeout(() => void this.flush(), this.config.WEBHOOK_RECORD_WINDOW_MS);
  }

  private flush(): Promise<void> {
    this.flushing ??= this.recordBatch().finally(() => {
      this.flushing = undefined;
      // These waited while the batch ran: they need no window of their own.
      if (this.waiting.length > 0) void this.flush();
    });
    return this.flushing;
  }

  private async recordBatch(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting.splice(0, RECORD_BATCH_MAX);
    try {
      const recorded = await this.deliveries.recordAttempts(
        batch.map(({ record }) => record),
        this.config.WEBHOOK_DISABLE_AFTER_FAILURES,
      );
      for (const { record, resolve } of batch) resolve(recorded.get(record.deliveryId) ?? null);
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
  }
}
