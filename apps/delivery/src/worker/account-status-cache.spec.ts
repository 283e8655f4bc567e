import type { AccountStatus } from '@envoi/contracts-accounts';

import { AccountStatusCache } from './account-status-cache';

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';

/** A lookup answering from `statuses`, recording the ids of every call. */
function fakeLookup(statuses: Map<string, AccountStatus>) {
  const calls: string[][] = [];
  const lookup = (ids: string[]) => {
    calls.push(ids);
    return Promise.resolve(new Map([...statuses].filter(([id]) => ids.includes(id))));
  };
  return { calls, lookup };
}

describe('AccountStatusCache', () => {
  it('asks once for the accounts looked up in one turn, and keeps the answers for the TTL', async () => {
    let now = 1_000;
    const { calls, lookup } = fakeLookup(new Map([[A, 'suspended']]));
    const cache = new AccountStatusCache(lookup, 500, () => now);

    await expect(
      Promise.all([cache.statusOf(A), cache.statusOf(B), cache.statusOf(A)]),
    ).resolves.toEqual(['suspended', 'active', 'suspended']);
    expect(calls).toEqual([[A, B]]);

    now += 499;
    await expect(cache.statusOf(A)).resolves.toBe('suspended');
    expect(calls).toHaveLength(1);
    now += 1;
    await cache.statusOf(A);
    expect(calls).toEqual([[A, B], [A]]);
  });

  it('asks again at once for a forgotten account', async () => {
    const statuses = new Map<string, AccountStatus>([[A, 'active']]);
    const { calls, lookup } = fakeLookup(statuses);
    const cache = new AccountStatusCache(lookup, 60_000);
    await expect(cache.statusOf(A)).resolves.toBe('active');

    statuses.set(A, 'parent-suspended');
    await expect(cache.statusOf(A)).resolves.toBe('active');
    cache.forget(A);
    await expect(cache.statusOf(A)).resolves.toBe('parent-suspended');
    expect(calls).toHaveLength(2);
  });

  it('does not keep an answer for an account forgotten while it was asked', async () => {
    const { calls, lookup } = fakeLookup(new Map([[A, 'active']]));
    const cache = new AccountStatusCache(lookup, 60_000);
    const first = cache.statusOf(A);
    cache.forget(A);
    await expect(first).resolves.toBe('active');
    await cache.statusOf(A);
    expect(calls).toHaveLength(2);
  });

  it('answers both lookups of an account forgotten and asked again within one turn', async () => {
    const { calls, lookup } = fakeLookup(new Map([[A, 'suspended']]));
    const cache = new AccountStatusCache(lookup, 60_000);
    const first = cache.statusOf(A);
    cache.forget(A);
    const second = cache.statusOf(A);
    await expect(Promise.all([first, second])).resolves.toEqual(['suspended', 'suspended']);
    expect(calls).toEqual([[A]]);
  });

  it('fails every waiter of a failed lookup and keeps nothing', async () => {
    let fail = true;
    const cache = new AccountStatusCache(
      (ids) =>
        fail
          ? Promise.reject(new Error('no responders'))
          : Promise.resolve(new Map(ids.map((id) => [id, 'deleted' as const]))),
      60_000,
    );
    await expect(Promise.all([cache.statusOf(A), cache.statusOf(B)])).rejects.toThrow(
      'no responders',
    );
    fail = false;
    await expect(cache.statusOf(A)).resolves.toBe('deleted');
  });

  it('keeps nothing with a TTL of 0', async () => {
    const { calls, lookup } = fakeLookup(new Map([[A, 'suspended']]));
    const cache = new AccountStatusCache(lookup, 0);
    await cache.statusOf(A);
    await cache.statusOf(A);
    expect(calls).toHaveLength(2);
  });
});
