/** How many items a flush takes at most, and how long the first of them waits for others. */
export interface BatcherLimits {
  maxItems: number;
  /** 0: the items added in the same turn of the event loop go together (no timer wait). */
  maxWaitMs: number;
  /**
   * One flush at a time: the items that come while one runs wait for it, and go together in the
   * next (group commit: the busier, the larger the batches, without a longer wait).
   */
  oneAtATime?: boolean;
}

/**
 * Writes the items of a batch at once: one result per item, in order. Throws when the batch as a
 * whole failed (nothing of it written).
 */
export type BatchFlush<T, R> = (items: readonly T[]) => Promise<R[]>;

interface Pending<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Gathers items that arrive close together and flushes them in one call: when `maxItems` are
 * waiting, or `maxWaitMs` after the first of them arrived. Each caller waits for its own item's
 * flush. When a batch fails, each of its items is flushed alone, so that one bad item fails only
 * its own caller.
 */
export class Batcher<T, R> {
  private waiting: Array<Pending<T, R>> = [];
  /** Cancels the wait of the items waiting (set while they wait for others). */
  private cancelWait: (() => void) | undefined;
  /** A flush runs (tracked only for `oneAtATime`). */
  private flushing = false;

  constructor(
    private readonly limits: BatcherLimits,
    private readonly flush: BatchFlush<T, R>,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.waiting.length >= this.limits.maxItems) this.flushWaiting();
      else this.cancelWait ??= this.waitThenFlush();
    });
  }

  /** Flushes after `maxWaitMs`, or at the end of this turn of the event loop for 0. */
  private waitThenFlush(): () => void {
    const flush = () => this.flushWaiting();
    if (this.limits.maxWaitMs === 0) {
      const immediate = setImmediate(flush);
      return () => clearImmediate(immediate);
    }
    const timer = setTimeout(flush, this.limits.maxWaitMs);
    return () => clearTimeout(timer);
  }

  private flushWaiting(): void {
    this.cancelWait?.();
    this.cancelWait = undefined;
    if (this.waiting.length === 0 || (this.limits.oneAtATime && this.flushing)) return;
    const batch = this.waiting.splice(0, this.limits.maxItems);
    if (!this.limits.oneAtATime) {
      void this.flushBatch(batch);
      return;
    }
    this.flushing = true;
    void this.flushBatch(batch).finally(() => {
      this.flushing = false;
      this.flushWaiting();
    });
  }

  private async flushBatch(batch: Array<Pending<T, R>>): Promise<void> {
    try {
      const results = await this.flush(batch.map((pending) => pending.item));
      if (results.length !== batch.length) {
        throw new Error(`a flush of ${batch.length} items gave ${results.length} results`);
      }
      batch.forEach((pending, index) => pending.resolve(results[index]));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]?.reject(error);
        return;
      }
      await Promise.all(batch.map((pending) => this.flushBatch([pending])));
    }
  }
}
