/** What a recording of a whole batch answers: each item's own result by its key. */
export type RecordBatch<Item, Result> = (
  items: readonly Item[],
) => Promise<ReadonlyMap<string, Result>>;

export interface BatchRecorderOptions<Item, Result> {
  /** Items that arrive within this of the first are recorded together. */
  windowMs: number;
  /** Items one batch takes at most; a full batch is recorded without waiting for the window. */
  maxBatch: number;
  /** The key under which `recordBatch` answers an item's result. */
  keyOf: (item: Item) => string;
  recordBatch: RecordBatch<Item, Result>;
}

interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result | null) => void;
  reject: (error: unknown) => void;
}

/**
 * Records call outcomes in batches: those that arrive within `windowMs` of the first (or
 * `maxBatch` of them) go in one recording; those that arrive while it runs go in the next, at
 * once. One batch at a time. Each caller learns its own item's result (null when the batch
 * answered none for it); a failed batch fails each of its callers.
 */
export class BatchRecorder<Item, Result> {
  private waiting: Array<Waiting<Item, Result>> = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(private readonly options: BatchRecorderOptions<Item, Result>) {}

  record(item: Item): Promise<Result | null> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything given so far is recorded. */
  async drain(): Promise<void> {
    while (this.flushing || this.waiting.length > 0) await this.flush();
  }

  private schedule(): void {
    if (this.flushing) return;
    if (this.waiting.length >= this.options.maxBatch) {
      void this.flush();
      return;
    }
    this.timer ??= setTimeout(() => void this.flush(), this.options.windowMs);
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
    const batch = this.waiting.splice(0, this.options.maxBatch);
    try {
      const results = await this.options.recordBatch(batch.map(({ item }) => item));
      for (const { item, resolve } of batch) resolve(results.get(this.options.keyOf(item)) ?? null);
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
  }
}
