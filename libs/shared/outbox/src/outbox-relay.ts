import type { NatsConnection } from 'nats';
import { type DataSource, In } from 'typeorm';

import { ensureStream, type StreamDefinition } from './event-stream';
import { OutboxMessageEntity } from './outbox-message.entity';

export interface OutboxRelayOptions {
  stream: StreamDefinition;
  /** Events published per transaction. */
  batchSize: number;
  /** Pause between runs when there is nothing to publish (a notify() cuts it short). */
  intervalMs: number;
  /** Batches at most per run, before the relay yields for `intervalMs`. */
  maxBatchesPerRun: number;
  /** How long to wait for the stream's acknowledgement of one event. */
  publishTimeoutMs: number;
  /** Published events are purged from the table after this long. */
  retentionMs: number;
  /** Rows purged at most per run. */
  purgeBatchSize: number;
}

export const DEFAULT_OUTBOX_RELAY_OPTIONS: Omit<OutboxRelayOptions, 'stream'> = {
  batchSize: 100,
  intervalMs: 1_000,
  maxBatchesPerRun: 10,
  publishTimeoutMs: 5_000,
  retentionMs: 24 * 3_600_000,
  purgeBatchSize: 1_000,
};

export interface OutboxRelayLogger {
  warn(message: string): void;
}

const encoder = new TextEncoder();

/**
 * Publishes outbox rows to JetStream, oldest first, each with `Nats-Msg-Id` = its id, and marks
 * them published once the stream acknowledged them. Replicas share the work: each claims a batch
 * with `FOR UPDATE SKIP LOCKED`. A crash between the acknowledgement and the commit republishes
 * the batch, which the stream drops as duplicates within its window (consumers deduplicate on the
 * event id beyond it). Runs are bounded in batches; a failure is retried at the next run.
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private wakeRequested = false;
  private streamReady = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly connection: NatsConnection,
    private readonly options: OutboxRelayOptions,
    private readonly logger: OutboxRelayLogger,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Something was just committed: publish it now rather than at the next interval. */
  notify(): void {
    if (this.stopped) return;
    if (this.running) {
      this.wakeRequested = true;
      return;
    }
    this.schedule(0);
  }

  /** Waits for the run in progress, then stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /**
   * Creates the stream if needed, then publishes one batch of pending events; returns how many
   * were published.
   */
  async relayBatch(): Promise<number> {
    if (!this.streamReady) {
      await ensureStream(this.connection, this.options.stream);
      this.streamReady = true;
    }
    const js = this.connection.jetstream();
    return this.dataSource.transaction(async (manager) => {
      const rows = await manager
        .createQueryBuilder(OutboxMessageEntity, 'outbox')
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .where('outbox.publishedAt IS NULL')
        .orderBy('outbox.seq', 'ASC')
        .limit(this.options.batchSize)
        .getMany();
      const published: string[] = [];
      for (const row of rows) {
        try {
          await js.publish(row.subject, encoder.encode(JSON.stringify(row.payload)), {
            msgID: row.id,
            expect: { streamName: this.options.stream.name },
            timeout: this.options.publishTimeoutMs,
          });
          published.push(row.id);
        } catch (error) {
          // Later events wait for this one, so that a subject's events keep their order.
          await manager.update(
            OutboxMessageEntity,
            { id: row.id },
            {
              failedAttempts: () => 'failed_attempts + 1',
              lastError: String(error).slice(0, 1_000),
            },
          );
          this.logger.warn(`outbox: publishing ${row.subject} ${row.id} failed: ${String(error)}`);
          break;
        }
      }
      if (published.length > 0) {
        await manager.update(
          OutboxMessageEntity,
          { id: In(published) },
          { publishedAt: () => 'now()' },
        );
      }
      return published.length;
    });
  }

  /** Deletes published events older than the retention; returns how many. */
  async purge(): Promise<number> {
    const cutoff = new Date(Date.now() - this.options.retentionMs);
    const stale = await this.dataSource.manager
      .createQueryBuilder(OutboxMessageEntity, 'outbox')
      .select('outbox.id')
      .where('outbox.publishedAt < :cutoff', { cutoff })
      .limit(this.options.purgeBatchSize)
      .getMany();
    if (stale.length === 0) return 0;
    await this.dataSource.manager.delete(OutboxMessageEntity, {
      id: In(stale.map((row) => row.id)),
    });
    return stale.length;
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.running = this.run().finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        const wake = this.wakeRequested;
        this.wakeRequested = false;
        this.schedule(wake ? 0 : this.options.intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  private async run(): Promise<void> {
    try {
      for (let batch = 0; batch < this.options.maxBatchesPerRun && !this.stopped; batch++) {
        if ((await this.relayBatch()) < this.options.batchSize) break;
      }
      if (!this.stopped) await this.purge();
    } catch (error) {
      this.logger.warn(
        `outbox relay run failed, retrying in ${this.options.intervalMs} ms: ${String(error)}`,
      );
    }
  }
}
