import { TtlCache } from './ttl-cache';

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

describe('TtlCache', () => {
  let now = 0;
  const clock = () => now;

  beforeEach(() => {
    now = 1_000;
  });

  it('keeps an answer for its TTL, then asks again', async () => {
    const cache = new TtlCache<string>(10, clock);
    const load = jest.fn(() => Promise.resolve(`v${now}`));

    await expect(cache.get('k', load, () => 100)).resolves.toBe('v1000');
    now += 99;
    await expect(cache.get('k', load, () => 100)).resolves.toBe('v1000');
    now += 1;
    await expect(cache.get('k', load, () => 100)).resolves.toBe('v1100');
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('shares one lookup between concurrent callers', async () => {
    const cache = new TtlCache<string>(10, clock);
    const answer = deferred<string>();
    const load = jest.fn(() => answer.promise);

    const both = Promise.all([cache.get('k', load, () => 100), cache.get('k', load, () => 100)]);
    answer.resolve('v');

    await expect(both).resolves.toEqual(['v', 'v']);
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('never stores an answer that was in flight when the key was invalidated', async () => {
    const cache = new TtlCache<string>(10, clock);
    const stale = deferred<string>();
    const first = cache.get(
      'k',
      () => stale.promise,
      () => 100,
    );

    cache.invalidate('k');
    const fresh = cache.get(
      'k',
      () => Promise.resolve('fresh'),
      () => 100,
    );
    stale.resolve('stale');

    await expect(first).resolves.toBe('stale');
    await expect(fresh).resolves.toBe('fresh');
    await expect(
      cache.get(
        'k',
        () => Promise.resolve('again'),
        () => 100,
      ),
    ).resolves.toBe('fresh');
  });

  it('never stores an answer that was in flight when every lookup in flight was discarded', async () => {
    const cache = new TtlCache<string>(10, clock);
    const stale = deferred<string>();
    const first = cache.get(
      'k',
      () => stale.promise,
      () => 100,
    );
    const kept = await cache.get(
      'other',
      () => Promise.resolve('kept'),
      () => 100,
    );

    cache.discardInFlight();
    stale.resolve('stale');

    await expect(first).resolves.toBe('stale');
    expect(kept).toBe('kept');
    expect(cache.size).toBe(1);
    await expect(
      cache.get(
        'k',
        () => Promise.resolve('fresh'),
        () => 100,
      ),
    ).resolves.toBe('fresh');
  });

  it('clear drops every entry and never stores an answer that was in flight', async () => {
    const cache = new TtlCache<string>(10, clock);
    const late = deferred<string>();
    await cache.get(
      'a',
      () => Promise.resolve('a1'),
      () => 100,
    );
    const pending = cache.get(
      'b',
      () => late.promise,
      () => 100,
    );

    cache.clear();
    late.resolve('b1');
    await expect(pending).resolves.toBe('b1');

    expect(cache.size).toBe(0);
    await expect(
      cache.get(
        'a',
        () => Promise.resolve('a2'),
        () => 100,
      ),
    ).resolves.toBe('a2');
  });

  it('does not keep failures or answers with no TTL', async () => {
    const cache = new TtlCache<string>(10, clock);

    await expect(
      cache.get(
        'k',
        () => Promise.reject(new Error('down')),
        () => 100,
      ),
    ).rejects.toThrow('down');
    await expect(
      cache.get(
        'k',
        () => Promise.resolve('a'),
        () => 0,
      ),
    ).resolves.toBe('a');
    await expect(
      cache.get(
        'k',
        () => Promise.resolve('b'),
        () => 100,
      ),
    ).resolves.toBe('b');
    expect(cache.size).toBe(1);
  });

  it('drops the oldest entries beyond its size', async () => {
    const cache = new TtlCache<string>(2, clock);
    for (const key of ['a', 'b', 'c'])
      await cache.get(
        key,
        () => Promise.resolve(key),
        () => 100,
      );
    const load = jest.fn(() => Promise.resolve('again'));

    await cache.get('a', load, () => 100);
    await cache.get('c', load, () => 100);

    expect(cache.size).toBe(2);
    expect(load).toHaveBeenCalledTimes(1);
  });
});
