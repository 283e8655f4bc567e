import { TtlCache } from '@envoi/shared-cache';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'nats';

/**
 * A replica's cache of answers another part of the platform owns, whose entries that part's change
 * broadcasts drop at once (a lookup in flight included), the TTL bounding a lost broadcast. A
 * subclass names the broadcasts in `listen`; they are subscribed while the module runs.
 */
export abstract class BroadcastDroppedCache<V> implements OnModuleInit, OnModuleDestroy {
  protected readonly cache: TtlCache<V>;
  private subscriptions: Subscription[] = [];

  protected constructor(maxEntries: number) {
    this.cache = new TtlCache<V>(maxEntries);
  }

  /** Subscribes to the broadcasts that name changed keys, each calling `drop` with its key. */
  protected abstract listen(drop: (key: string) => void): Subscription[];

  onModuleInit(): void {
    this.subscriptions = this.listen((key) => this.cache.invalidate(key));
  }

  onModuleDestroy(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
  }
}
