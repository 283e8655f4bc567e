/** One caller's items and how its promise is settled. */
interface Waiting<Item, Answer> {
  items: readonly Item[];
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

/**
 * Questions of one key asked while one of that key is in flight wait for it to end, then go out
 * together as one question: no delay when idle, one round trip for many under load. Each
 * question starts after its callers asked, so none is answered from an older one. A question
 * carries at most `maxItems` items (a caller with more goes alone); every caller gets the answer
 * of the question that carried its items.
 */
export class KeyedBatches<Item, Answer> {
  private readonly queues = new Map<string, Array<Waiting<Item, Answer>>>();

  constructor(
    private readonly ask: (key: string, items: Item[]) => Promise<Answer>,
    private readonly maxItems: number,
  ) {}

  submit(key: string, items: readonly Item[]): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      const waiting = this.queues.get(key);
      if (waiting) {
        waiting.push({ items, resolve, reject });
        return;
      }
      this.queues.set(key, []);
      this.send(key, [{ items, resolve, reject }]);
    });
  }

  /** Keys with a question in flight. */
  get inFlight(): number {
    return this.queues.size;
  }

  /** Callers of the key waiting for its question in flight to end; undefined when none is. */
  waiting(key: string): number | undefined {
    return this.queues.get(key)?.length;
  }

  private send(key: string, batch: Array<Waiting<Item, Answer>>): void {
    void this.answer(key, batch).finally(() => this.sendWaiting(key));
  }

  private async answer(key: string, batch: Array<Waiting<Item, Answer>>): Promise<void> {
    try {
      const answer = await this.ask(
        key,
        batch.flatMap((caller) => [...caller.items]),
      );
      for (const caller of batch) caller.resolve(answer);
    } catch (error) {
      for (const caller of batch) caller.reject(error);
    }
  }

  /** The callers that waited, as many as fit in one question, in the order they asked. */
  private sendWaiting(key: string): void {
    const waiting = this.queues.get(key) ?? [];
    if (waiting.length === 0) {
      this.queues.delete(key);
      return;
    }
    let count = 0;
    let items = 0;
    for (const caller of waiting) {
      if (count > 0 && items + caller.items.length > this.maxItems) break;
      count += 1;
      items += caller.items.length;
    }
    this.send(key, waiting.splice(0, count));
  }
}
