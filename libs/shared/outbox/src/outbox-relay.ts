import { headers, type MsgHdrs, type NatsConnection } from 'nats';
import { type DataSource, In } from 'typeorm';

import { ensureStream, type StreamDefinition } from './event-stream';
import { OutboxMessageEntity } from './outbox-message.entity';

export interface OutboxRelayOptions {
  /** The events stream (created at start). */
  stream: StreamDefinition;
  /** Other streams rows may target (a work queue of jobs), created at start too. */
  streams?: readonly StreamDefinition[];
  /** Events published per transaction. */
  batchSize: number;
  /** Pause between runs when there is nothing to publish (a notify() cuts it short). */
  intervalMs: number;
  /** Batches at most per run, before the relay yields for `intervalMs`. */
  maxBatchesPerRun: number;
  /** How long to wait for the stream's acknowledgement of one event. */
  publishTimeoutMs: number;
  /** Published (and cancelled) rows are purged from the table after this long. */
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

function natsHeadersOf(values: Record<string, string>): MsgHdrs {
  const result = headers();
  for (const [name, value] of Object.entries(values)) result.set(name, value);
  return result;
}

/**
 * Publishes due outbox rows to JetStream (their `available_at` has come; cancelled rows never),
 * oldest first, each into its stream with `Nats-Msg-Id` = its id, and marks them published once
 * the stream acknowledged them. Replicas share the work: each claims a batch with
 * `FOR UPDATE SKIP LOCKED`, so a row being published is locked and a concurrent cancellation
 * waits for the outcome. A crash between the acknowledgement and the commit republishes the
 * batch, which the stream drops as duplicates within its window (consumers deduplicate on the id
 * beyond it). Runs are bounded in batches; a failure is retried at the next run. A row that comes
 * due is published at the next run (within `intervalMs`).
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
   * Creates the streams if needed, then publishes one batch of due rows; returns how many were
   * published.
   */
  async relayBatch(): Promise<number> {
    if (!this.streamReady) {
      for (const stream of [this.options.stream, ...(this.options.streams ?? [])]) {
        await ensureStream(this.connection, stream);
      }
      this.streamReady = true;
    }
    const js = this.connection.jetstream();
    return this.dataSource.transaction(async (manager) => {
      const rows = await manager
        .createQueryBuilder(OutboxMessageEntity, 'outbox')
        .setLock('pessimistic_write')
        .setOnLocked('skip_locked')
        .where('outbox.publishedAt IS NULL')
        .andWhere('outbox.cancelledAt IS NULL')
        .andWhere('outbox.availableAt <= now()')
        .orderBy('outbox.availableAt', 'ASC')
        .addOrderBy('outbox.seq', 'ASC')
        .limit(this.options.batchSize)
        .getMany();
      // Sent back to back on one connection, so the server receives them in order; only the
      // acknowledgements are awaited together.
      const outcomes = await Promise.allSettled(
        rows.map((row) =>
          js.publish(row.subject, encoder.encode(JSON.stringify(row.payload)), {
            msgID: row.id,
            headers: row.trace ? natsHeadersOf(row.trace) : undefined,
            expect: { streamName: row.stream },
            timeout: this.options.publishTimeoutMs,
          }),
        ),
      );
      const published: string[] = [];
      for (const [index, outcome] of outcomes.entries()) {
        const row = rows[index];
        if (!row) break;
        if (outcome.status === 'fulfilled') {
          published.push(row.id);
          continue;
        }
        // Later rows wait for this one (those the stream already took are dropped as duplicates
        // when they are published again), so that a subject's events keep their order.
        const error = String(outcome.reason);
        await manager.update(
          OutboxMessageEntity,
          { id: row.id },
          { failedAttempts: () => 'failed_attempts + 1', lastError: error.slice(0, 1_000) },
        );
        this.logger.warn(`outbox: publishing ${row.subject} ${row.id} failed: ${error}`);
        break;
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

  /** Deletes rows published or cancelled longer than the retention ago; returns how many. */
  async purge(): Promise<number> {
    const cutoff = new Date(Date.now() - this.options.retentionMs);
    const stale = await this.dataSource.manager
      .createQueryBuilder(OutboxMessageEntity, 'outbox')
      .select('outbox.id')
      .where('(outbox.publishedAt < :cutoff OR outbox.cancelledAt < :cutoff)', { cutoff })
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
