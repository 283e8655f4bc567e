import { DomainAnswerCache } from './domain-answer-cache';

const ACCOUNT = 'account-1';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((ok) => {
    resolve = ok;
  });
  return { promise, resolve };
}

interface Answer {
  value: string;
  ttlMs: number;
}

describe('DomainAnswerCache', () => {
  let now: number;
  const newCache = (maxTtlMs = 60_000) =>
    new DomainAnswerCache<Answer>({ ttlOf: (answer) => answer.ttlMs, maxTtlMs, now: () => now });

  beforeEach(() => {
    now = 1_000;
  });

  it('loads by the normalised name and shares the entry between spellings of it', async () => {
    const cache = newCache();
    const load = jest.fn((domain: string) => Promise.resolve({ value: domain, ttlMs: 100 }));

    await expect(cache.get(ACCOUNT, ' Example.COM. ', load)).resolves.toEqual({
      value: 'example.com',
      ttlMs: 100,
    });
    await expect(cache.get(ACCOUNT, 'example.com', load)).resolves.toMatchObject({
      value: 'example.com',
    });
    expect(load).toHaveBeenCalledTimes(1);
    expect(load).toHaveBeenCalledWith('example.com');
  });

  it('keeps answers per account', async () => {
    const cache = newCache();
    const load = jest.fn(() => Promise.resolve({ value: 'v', ttlMs: 100 }));

    await cache.get(ACCOUNT, 'example.com', load);
    await cache.get('account-2', 'example.com', load);

    expect(load).toHaveBeenCalledTimes(2);
  });

  it("keeps an answer as long as it says, never beyond this service's bound", async () => {
    const cache = newCache(50);
    let version = 0;
    const load = () => Promise.resolve({ value: `v${++version}`, ttlMs: 100 });

    await cache.get(ACCOUNT, 'example.com', load);
    now += 49;
    await expect(cache.get(ACCOUNT, 'example.com', load)).resolves.toMatchObject({ value: 'v1' });
    now += 1;
    await expect(cache.get(ACCOUNT, 'example.com', load)).resolves.toMatchObject({ value: 'v2' });
  });

  it('drops an answer on invalidation, whatever spelling the broadcast carries', async () => {
    const cache = newCache();
    let version = 0;
    const load = () => Promise.resolve({ value: `v${++version}`, ttlMs: 100 });

    await cache.get(ACCOUNT, 'example.com', load);
    cache.invalidate(ACCOUNT, 'EXAMPLE.com.');

    expect(cache.size).toBe(0);
    await expect(cache.get(ACCOUNT, 'example.com', load)).resolves.toMatchObject({ value: 'v2' });
  });

  it('never stores the answer of a lookup in flight when the domain changed', async () => {
    const cache = newCache();
    const beforeChange = deferred<Answer>();
    const inFlight = cache.get(ACCOUNT, 'example.com', () => beforeChange.promise);

    cache.invalidate(ACCOUNT, 'example.com');
    beforeChange.resolve({ value: 'rotated-away key', ttlMs: 100 });

    await expect(inFlight).resolves.toMatchObject({ value: 'rotated-away key' });
    expect(cache.size).toBe(0);
    await expect(
      cache.get(ACCOUNT, 'example.com', () => Promise.resolve({ value: 'new key', ttlMs: 100 })),
    ).resolves.toMatchObject({ value: 'new key' });
  });
});
