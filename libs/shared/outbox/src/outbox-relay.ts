import type { NatsConnection } from 'nats';
import type { DataSource } from 'typeorm';

import { ensureStream, type StreamDefinition } from './event-stream';
import { claimDueMessages, markPublished, recordFailure } from './outbox-claim';
import { outboxTable } from './outbox-insert';
import { StreamPublisher } from './stream-publisher';

export interface OutboxRelayOptions {
  /** The events stream (created at start). */
  stream: StreamDefinition;
  /** Other streams rows may target (a work queue of jobs), created at start too. */
  streams?: readonly StreamDefinition[];
  /** Stream messages published per transaction at first (a batch row counts its events). */
  batchSize: number;
  /** A full batch doubles the next one, up to this many messages. */
  maxBatchSize: number;
  /** Pause between runs when there is nothing to publish (a notify() cuts it short). */
  intervalMs: number;
  /**
   * A notify() starts a run at once, unless one started less than this long ago: then it starts
   * this long after that one. Under load the commits of that time are published together, in
   * one claim, instead of a run for almost every one.
   */
  wakeDelayMs: number;
  /** Batches at most per run, before the relay purges and starts another run. */
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
  maxBatchSize: 3_200,
  intervalMs: 1_000,
  wakeDelayMs: 20,
  maxBatchesPerRun: 10,
  publishTimeoutMs: 5_000,
  retentionMs: 24 * 3_600_000,
  purgeBatchSize: 1_000,
};

interface BatchOutcome {
  /** Stream messages of the rows marked published. */
  published: number;
  /** Every message or row claimable was taken: more may be due. */
  full: boolean;
}

/**
 * The rows a claim of `maxMessages` locks, from the messages per row of the last claim: twice as
 * many as those messages need at that rate (a batch row of a send's events holds many), never
 * more than `maxMessages` (a row holds at least one).
 */
export function claimRowLimit(maxMessages: number, messagesPerRow: number): number {
  const needed = Math.ceil((2 * maxMessages) / Math.max(1, messagesPerRow));
  return Math.max(1, Math.min(maxMessages, needed));
}

export interface OutboxRelayLogger {
  warn(message: string): void;
}

const encoder = new TextEncoder();

/**
 * Publishes due outbox rows to JetStream (their `available_at` has come; cancelled rows never),
 * oldest first, each into its stream with `Nats-Msg-Id` = its id, and marks them published once
 * the stream acknowledged them. Replicas share the work: each claims a batch with
 * `FOR UPDATE SKIP LOCKED`, so a row being published is locked and a concurrent cancellation
 * waits for the outcome. A crash between the acknowledgement and the commit republishes the
 * batch, which the stream drops as duplicates within its window (consumers deduplicate on the id
 * beyond it). Batches run back to back while they come full, each twice the last up to
 * `maxBatchSize` messages; a failure is retried after `intervalMs`. A row that comes due is
 * published at the next run (within `intervalMs`).
 */
export class OutboxRelay {
  private timer: NodeJS.Timeout | undefined;
  /** When the timer's run is due (epoch ms); Infinity while none is set. */
  private runDueAt = Infinity;
  private running: Promise<void> | undefined;
  private stopped = true;
  private wakeRequested = false;
  private streamReady = false;
  private nextBatchSize: number;
  /** Stream messages per row in the last claim that took any. */
  private messagesPerRow = 1;
  private nextPurgeAt = 0;
  private lastRunStartedAt = 0;
  private readonly publisher: StreamPublisher;

  constructor(
    private readonly dataSource: DataSource,
    private readonly connection: NatsConnection,
    private readonly options: OutboxRelayOptions,
    private readonly logger: OutboxRelayLogger,
  ) {
    this.nextBatchSize = options.batchSize;
    this.publisher = new StreamPublisher(connection);
  }

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
    const now = Date.now();
    const delayMs = this.wakeDelay(now);
    // A run already due by then publishes it too: the timer is left as it is (re-arming it on
    // every commit, each time for another delay, cost more than the rest of the notification).
    if (this.runDueAt <= now + delayMs) return;
    this.schedule(delayMs);
  }

  /** How long a wake waits: until `wakeDelayMs` after the last run started. */
  private wakeDelay(now = Date.now()): number {
    return Math.max(0, this.lastRunStartedAt + this.options.wakeDelayMs - now);
  }

  /** Waits for the run in progress, then stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    this.publisher.close();
  }

  /**
   * Creates the streams if needed, then publishes one batch of due rows; returns how many stream
   * messages were published.
   */
  async relayBatch(): Promise<number> {
    return (await this.publishBatch(this.options.batchSize)).published;
  }

  private async publishBatch(maxMessages: number): Promise<BatchOutcome> {
    if (!this.streamReady) {
      for (const stream of [this.options.stream, ...(this.options.streams ?? [])]) {
        await ensureStream(this.connection, stream);
      }
      this.streamReady = true;
    }
    const table = outboxTable(this.dataSource.manager);
    return this.dataSource.transaction(async (manager) => {
      const maxRows = claimRowLimit(maxMessages, this.messagesPerRow);
      const messages = await claimDueMessages(manager, table, maxMessages, maxRows);
      const rows = new Set(messages.map((message) => message.rowId)).size;
      if (rows > 0) this.messagesPerRow = messages.length / rows;
      // Sent back to back on one connection, so the server receives them in order; only the
      // acknowledgements are awaited together.
      const outcomes = await this.publisher.publishAll(
        messages.map((message) => ({
          subject: message.subject,
          data: encoder.encode(message.data),
          msgId: message.msgId,
          stream: message.stream,
          headers: message.trace,
        })),
        this.options.publishTimeoutMs,
      );
      const failedAt = outcomes.findIndex((outcome) => outcome.status === 'rejected');
      const failed = failedAt === -1 ? undefined : messages[failedAt];
      // Later rows (and the rest of a batch row) wait for the failed one, so that a subject's
      // events keep their order; the messages the stream already took are dropped as duplicates
      // when they are published again.
      const settled = failed
        ? messages.slice(0, failedAt).filter((message) => message.rowId !== failed.rowId)
        : messages;
      await markPublished(manager, table, [...new Set(settled.map((message) => message.rowId))]);
      if (failed) {
        const outcome = outcomes[failedAt];
        const error = outcome?.status === 'rejected' ? String(outcome.reason) : '';
        await recordFailure(manager, table, failed.rowId, error);
        this.logger.warn(`outbox: publishing ${failed.subject} ${failed.msgId} failed: ${error}`);
      }
      // Rows locked beyond the message budget are left out only once it is reached.
      const full = messages.length >= maxMessages || rows >= maxRows;
      return { published: settled.length, full: !failed && full };
    });
  }

  /** Deletes rows published or cancelled longer than the retention ago; returns how many. */
  async purge(): Promise<number> {
    const table = outboxTable(this.dataSource.manager);
    const cutoff = new Date(Date.now() - this.options.retentionMs);
    const [, deleted] = await this.dataSource.query<[unknown, number]>(
      `DELETE FROM ${table} WHERE id IN (SELECT id FROM ${table}
        WHERE published_at < $1 OR cancelled_at < $1 LIMIT $2)`,
      [cutoff, this.options.purgeBatchSize],
    );
    return deleted;
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.runDueAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.runDueAt = Infinity;
      this.lastRunStartedAt = Date.now();
      this.running = this.run().then((moreDue) => {
        this.running = undefined;
        if (this.stopped) return;
        const woken = this.wakeRequested;
        this.wakeRequested = false;
        this.schedule(moreDue ? 0 : woken ? this.wakeDelay() : this.options.intervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  /**
   * Publishes batches while they come full, then purges (at most once per `intervalMs` unless the
   * last purge was full); true when more may be due.
   */
  private async run(): Promise<boolean> {
    try {
      let full = true;
      for (let batch = 0; full && batch < this.options.maxBatchesPerRun && !this.stopped; batch++) {
        ({ full } = await this.publishBatch(this.nextBatchSize));
        this.nextBatchSize = full
          ? Math.min(
              this.nextBatchSize * 2,
              Math.max(this.options.maxBatchSize, this.options.batchSize),
            )
          : this.options.batchSize;
      }
      if (!this.stopped && Date.now() >= this.nextPurgeAt) {
        const purged = await this.purge();
        // Under load runs follow each other closely; a full purge may have left more behind.
        this.nextPurgeAt =
          purged >= this.options.purgeBatchSize ? 0 : Date.now() + this.options.intervalMs;
      }
      return full;
    } catch (error) {
      this.logger.warn(
        `outbox relay run failed, retrying in ${this.options.intervalMs} ms: ${String(error)}`,
      );
      return false;
    }
  }
}
