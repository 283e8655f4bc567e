import type { VerifiedApiKey } from '@envoi/contracts-accounts';

import { hashApiKey } from './api-key-secret';
import { type ApiKeyLookup, ApiKeyVerifier } from './api-key-verifier';

const SECRET = `envoi-sk-${'a1B2'.repeat(16)}`;
const OTHER_SECRET = `envoi-sk-${'c3D4'.repeat(16)}`;
const KEY: VerifiedApiKey = {
  key_id: 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f',
  account_id: '3f0b7f7e-8a43-4c3e-9d2a-1b2c3d4e5f60',
  parent_account_id: null,
  account_status: 'active',
  scopes: ['accounts:read'],
  ip_allow_list: [],
};
const OTHER_KEY: VerifiedApiKey = { ...KEY, key_id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d' };
const THIRD_SECRET = `envoi-sk-${'e5F6'.repeat(16)}`;
const OTHER_ACCOUNT_KEY: VerifiedApiKey = {
  ...KEY,
  key_id: '7b6a5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d',
  account_id: '5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a',
};

/** A lookup whose answers the test releases one at a time. */
function deferredLookup() {
  const pending: Array<{ hash: string; resolve: (key: VerifiedApiKey | null) => void }> = [];
  const lookup = jest.fn<ReturnType<ApiKeyLookup>, Parameters<ApiKeyLookup>>(
    (hash) => new Promise((resolve) => pending.push({ hash, resolve })),
  );
  const answer = (key: VerifiedApiKey | null) => {
    const next = pending.shift();
    if (!next) throw new Error('no lookup in flight');
    next.resolve(key);
  };
  return { lookup, answer, pending };
}

function answering(key: VerifiedApiKey | null) {
  return jest.fn<ReturnType<ApiKeyLookup>, Parameters<ApiKeyLookup>>(() => Promise.resolve(key));
}

describe('ApiKeyVerifier', () => {
  it('asks by the secret’s hash and answers the principal with its scopes as a set', async () => {
    const lookup = answering(KEY);
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 60_000 });
    const principal = await verifier.verify(SECRET, 'req-1');
    expect(lookup).toHaveBeenCalledWith(hashApiKey(SECRET), 'req-1');
    expect(principal).toMatchObject(KEY);
    expect(principal?.scopeSet).toEqual(new Set(KEY.scopes));
  });

  it('answers from its cache within the TTL, and asks again after it', async () => {
    let now = 0;
    const lookup = answering(KEY);
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 1_000, now: () => now });
    await verifier.verify(SECRET, 'req-1');
    now = 999;
    await verifier.verify(SECRET, 'req-2');
    expect(lookup).toHaveBeenCalledTimes(1);
    now = 1_000;
    await verifier.verify(SECRET, 'req-3');
    expect(lookup).toHaveBeenCalledTimes(2);
  });

  it('remembers an unknown key only for the negative TTL', async () => {
    let now = 0;
    const lookup = answering(null);
    const verifier = new ApiKeyVerifier(lookup, {
      ttlMs: 60_000,
      negativeTtlMs: 100,
      now: () => now,
    });
    await expect(verifier.verify(SECRET, 'req-1')).resolves.toBeNull();
    await expect(verifier.verify(SECRET, 'req-2')).resolves.toBeNull();
    expect(lookup).toHaveBeenCalledTimes(1);
    now = 100;
    await verifier.verify(SECRET, 'req-3');
    expect(lookup).toHaveBeenCalledTimes(2);
  });

  it('caches nothing with a TTL of 0', async () => {
    const lookup = answering(KEY);
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 0 });
    await verifier.verify(SECRET, 'req-1');
    await verifier.verify(SECRET, 'req-2');
    expect(lookup).toHaveBeenCalledTimes(2);
  });

  it('shares one lookup between concurrent verifications of a secret', async () => {
    const { lookup, answer } = deferredLookup();
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 60_000 });
    const first = verifier.verify(SECRET, 'req-1');
    const second = verifier.verify(SECRET, 'req-2');
    answer(KEY);
    expect(await first).toBe(await second);
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it('propagates a failed lookup and caches nothing', async () => {
    const lookup = jest
      .fn<ReturnType<ApiKeyLookup>, Parameters<ApiKeyLookup>>()
      .mockRejectedValueOnce(new Error('accounts down'))
      .mockResolvedValueOnce(KEY);
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 60_000 });
    await expect(verifier.verify(SECRET, 'req-1')).rejects.toThrow('accounts down');
    await expect(verifier.verify(SECRET, 'req-2')).resolves.toMatchObject(KEY);
  });

  it('forgets a cached key at once when it changes, and only that key', async () => {
    const lookup = jest.fn<ReturnType<ApiKeyLookup>, Parameters<ApiKeyLookup>>((hash) =>
      Promise.resolve(hash === hashApiKey(SECRET) ? KEY : OTHER_KEY),
    );
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 60_000 });
    await verifier.verify(SECRET, 'req-1');
    await verifier.verify(OTHER_SECRET, 'req-2');
    verifier.forget(KEY.key_id);
    await verifier.verify(SECRET, 'req-3');
    await verifier.verify(OTHER_SECRET, 'req-4');
    expect(lookup.mock.calls.map(([hash]) => hash)).toEqual([
      hashApiKey(SECRET),
      hashApiKey(OTHER_SECRET),
      hashApiKey(SECRET),
    ]);
  });

  it('does not cache the answer of a lookup that started before a revocation', async () => {
    const { lookup, answer } = deferredLookup();
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 60_000 });
    const raced = verifier.verify(SECRET, 'req-1');
    // The revocation arrives while the lookup is in flight: its key id is not known yet.
    verifier.forget(KEY.key_id);
    answer(KEY);
    await expect(raced).resolves.toMatchObject(KEY);

    const after = verifier.verify(SECRET, 'req-2');
    expect(lookup).toHaveBeenCalledTimes(2);
    answer(null);
    await expect(after).resolves.toBeNull();
  });

  it('starts a new lookup for a verification made after the revocation, not joining the old one', async () => {
    const { lookup, answer } = deferredLookup();
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 60_000 });
    const raced = verifier.verify(SECRET, 'req-1');
    verifier.forget(KEY.key_id);
    const after = verifier.verify(SECRET, 'req-2');
    expect(lookup).toHaveBeenCalledTimes(2);
    answer(KEY);
    answer(null);
    await expect(raced).resolves.toMatchObject(KEY);
    await expect(after).resolves.toBeNull();
    await expect(verifier.verify(SECRET, 'req-3')).resolves.toBeNull();
    expect(lookup).toHaveBeenCalledTimes(2);
  });

  it('forgets every cached key of an account at once, and only those', async () => {
    const keyBySecretHash = new Map([
      [hashApiKey(SECRET), KEY],
      [hashApiKey(OTHER_SECRET), OTHER_KEY],
      [hashApiKey(THIRD_SECRET), OTHER_ACCOUNT_KEY],
    ]);
    const lookup = jest.fn<ReturnType<ApiKeyLookup>, Parameters<ApiKeyLookup>>((hash) =>
      Promise.resolve(keyBySecretHash.get(hash) ?? null),
    );
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 60_000 });
    for (const secret of [SECRET, OTHER_SECRET, THIRD_SECRET]) await verifier.verify(secret, 'r');

    verifier.forgetAccount(KEY.account_id);
    for (const secret of [SECRET, OTHER_SECRET, THIRD_SECRET]) await verifier.verify(secret, 'r');

    expect(lookup.mock.calls.map(([hash]) => hash)).toEqual([
      hashApiKey(SECRET),
      hashApiKey(OTHER_SECRET),
      hashApiKey(THIRD_SECRET),
      hashApiKey(SECRET),
      hashApiKey(OTHER_SECRET),
    ]);
  });

  it('does not cache a lookup in flight when an account changes status', async () => {
    const { lookup, answer } = deferredLookup();
    const verifier = new ApiKeyVerifier(lookup, { ttlMs: 60_000 });
    const raced = verifier.verify(SECRET, 'req-1');
    verifier.forgetAccount(KEY.account_id);
    answer(KEY);
    await expect(raced).resolves.toMatchObject(KEY);

    const after = verifier.verify(SECRET, 'req-2');
    expect(lookup).toHaveBeenCalledTimes(2);
    answer({ ...KEY, account_status: 'suspended' });
    await expect(after).resolves.toMatchObject({ account_status: 'suspended' });
  });
});
