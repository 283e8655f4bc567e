import type { Subscription } from 'nats';

import { BroadcastDroppedCache } from './broadcast-dropped-cache';

/** Answers `answer` for every key; `changed(key)` plays a broadcast naming the key. */
class NumberCache extends BroadcastDroppedCache<number> {
  answer = 1;
  unsubscribed = 0;
  private dropFromBroadcast: ((key: string) => void) | undefined;

  constructor() {
    super(10);
  }

  of(key: string): Promise<number> {
    return this.cache.get(
      key,
      () => Promise.resolve(this.answer),
      () => 60_000,
    );
  }

  changed(key: string): void {
    this.dropFromBroadcast?.(key);
  }

  protected listen(drop: (key: string) => void): Subscription[] {
    this.dropFromBroadcast = drop;
    const subscription: Pick<Subscription, 'unsubscribe'> = {
      unsubscribe: () => {
        this.unsubscribed += 1;
        this.dropFromBroadcast = undefined;
      },
    };
    return [subscription as Subscription];
  }
}

describe('BroadcastDroppedCache', () => {
  it('keeps answers until a broadcast names their key, and listens only while the module runs', async () => {
    const cache = new NumberCache();
    cache.onModuleInit();
    expect(await cache.of('a')).toBe(1);
    expect(await cache.of('b')).toBe(1);
    cache.answer = 2;
    expect(await cache.of('a')).toBe(1);

    cache.changed('a');
    expect(await cache.of('a')).toBe(2);
    expect(await cache.of('b')).toBe(1);

    cache.onModuleDestroy();
    expect(cache.unsubscribed).toBe(1);
    cache.answer = 3;
    cache.changed('b');
    expect(await cache.of('b')).toBe(1);
  });
});
