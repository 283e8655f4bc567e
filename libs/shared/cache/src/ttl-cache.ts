/**
 * A small cache of answers from another service: entries expire, concurrent lookups of one key
 * share one request, and an invalidation also discards the answer of a lookup in flight (so an
 * answer that predates a change is never stored). At most `maxEntries`; the oldest go first.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly inflight = new Map<string, Promise<V>>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached value, or the loader's; `ttlOf` says how long its answer may be kept (0: not). */
  get(key: string, load: () => Promise<V>, ttlOf: (value: V) => number): Promise<V> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > this.now()) return Promise.resolve(entry.value);
    if (entry) this.entries.delete(key);
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const promise: Promise<V> = load().then(
      (value) => {
        if (this.inflight.get(key) === promise) {
          this.inflight.delete(key);
          this.store(key, value, ttlOf(value));
        }
        return value;
      },
      (error: unknown) => {
        if (this.inflight.get(key) === promise) this.inflight.delete(key);
        throw error;
      },
    );
    this.inflight.set(key, promise);
    return promise;
  }

  invalidate(key: string): void {
    this.entries.delete(key);
    this.inflight.delete(key);
  }

  /** Drops every entry and discards the answers of the lookups in flight. */
  clear(): void {
    this.entries.clear();
    this.inflight.clear();
  }

  /**
   * Discards the answers of every lookup in flight (they are still returned to their callers,
   * never stored): for a change whose key is not known until an answer names it, such as a
   * revoked API key broadcast by id while lookups go by secret.
   */
  discardInFlight(): void {
    this.inflight.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private store(key: string, value: V, ttlMs: number): void {
    if (!(ttlMs > 0) || this.maxEntries <= 0) return;
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
  }
}
