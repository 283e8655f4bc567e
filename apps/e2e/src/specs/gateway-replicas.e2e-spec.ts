import { AccountsSubjects } from '@envoi/contracts-accounts';
import { pollUntil } from '@envoi/shared-testing';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
  rpc,
} from '../support/account-session';
import { KeyClient } from '../support/api-client';
import {
  type GatewayReplica,
  rateLimitPeersHeard,
  startGatewayReplica,
} from '../support/gateway-replica';

/** The second replica's API key cache TTL. */
const CACHE_TTL_MS = 60_000;
/** A third of the cache TTL: room for a loaded machine, well before the cache would expire. */
const BROADCAST_TAKEN_WITHIN_MS = CACHE_TTL_MS / 3;

/**
 * A second gateway replica whose verification cache would trust a key for a minute: only the
 * accounts service's broadcast can make it forget a changed or deleted key within seconds.
 */
describe('API key changes across gateway replicas', () => {
  let replica: GatewayReplica;
  let session: AccountSession;

  beforeAll(async () => {
    replica = await startGatewayReplica('gateway-2', {
      API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS),
    });
    session = await createAccountSession();
  });

  afterAll(async () => {
    await replica?.stop();
    await closeSessions();
  });

  function onReplica(client: KeyClient, pathname: string) {
    return client.get(pathname, replica.target);
  }

  it('stops accepting a deleted key on every replica within seconds', async () => {
    const key = await createKey(session, ['accounts:read']);
    expect((await key.client.get('/v2/ping')).status).toBe(200);
    expect((await onReplica(key.client, '/v2/ping')).status).toBe(200); // now cached on the replica

    expect((await session.api.delete(session.path(`/api-keys/${key.id}`))).status).toBe(200);

    await pollUntil(
      () => onReplica(key.client, '/v2/ping'),
      (response) => response.status === 401,
      { timeoutMs: BROADCAST_TAKEN_WITHIN_MS, what: 'the replica to reject the deleted key' },
    );
  });

  it('refuses the keys of a suspended sub-account on every replica within seconds', async () => {
    const created = await session.api.post<{ id: string }>(session.path('/sub-accounts'), {
      name: 'replicated child',
      website: 'replicated.example.com',
    });
    expect(created.status).toBe(201);
    const childId = created.body.id;
    const childKey = await (
      await rpc()
    ).request(AccountsSubjects.createApiKey, {
      account_id: childId,
      key: { label: 'child', scopes: ['accounts:read'] },
    });
    const child = new KeyClient(childKey.secret_key);
    expect((await onReplica(child, '/v2/ping')).status).toBe(200); // now cached on the replica

    const path = session.path(`/sub-accounts/${childId}`);
    expect((await session.api.post(`${path}/suspend`, { reason: 'audit' })).status).toBe(200);
    await pollUntil(
      () => onReplica(child, '/v2/ping'),
      (response) => response.status === 401,
      {
        timeoutMs: BROADCAST_TAKEN_WITHIN_MS,
        what: 'the replica to refuse the suspended child key',
      },
    );

    expect((await session.api.post(`${path}/unsuspend`)).status).toBe(200);
    await pollUntil(
      () => onReplica(child, '/v2/ping'),
      (response) => response.status === 200,
      {
        timeoutMs: BROADCAST_TAKEN_WITHIN_MS,
        what: 'the replica to accept the unsuspended child key',
      },
    );
  });

  it('applies a scope change on every replica within seconds', async () => {
    const key = await createKey(session, ['accounts:read', 'api-keys:read']);
    expect((await onReplica(key.client, session.path())).status).toBe(200);

    const updated = await session.api.put(session.path(`/api-keys/${key.id}`), {
      scopes: ['api-keys:read'],
    });
    expect(updated.status).toBe(200);

    await pollUntil(
      () => onReplica(key.client, session.path()),
      (response) => response.status === 403,
      { timeoutMs: BROADCAST_TAKEN_WITHIN_MS, what: 'the replica to apply the narrowed scopes' },
    );
  });
});

/**
 * The general limit of the two replicas below: 100/s burst 200 scaled down, so that test clients
 * opening a TLS connection per request exceed it well on a loaded machine.
 */
const LIMIT = { perSecond: 20, burst: 40 };
/** README: within ±10 % of what one exact bucket lets through. */
const TOLERANCE = 0.1;
const LOAD_MS = 2_000;
/** A loaded machine sends slower: the load goes on until it is heavy enough, up to this long. */
const MAX_LOAD_MS = 10_000;
const CLIENTS = 8;

/** The most one exact bucket lets through in `elapsedMs`: its burst plus what refilled. */
function exactCeiling(elapsedMs: number): number {
  return LIMIT.burst + Math.floor((elapsedMs * LIMIT.perSecond) / 1000) + 1;
}

/** Offered well over the limit: half as much again as an exact bucket lets through. */
function heavyEnough(requests: number, elapsedMs: number): boolean {
  return requests > 1.5 * exactCeiling(elapsedMs);
}

/**
 * The account limit held by two replicas together over NATS (no database round trip), whether an
 * account's traffic lands on one replica or on both.
 */
describe('the account rate limit across gateway replicas', () => {
  let replicas: GatewayReplica[] = [];

  beforeAll(async () => {
    const settings = {
      RATE_LIMIT_GENERAL_PER_SECOND: String(LIMIT.perSecond),
      RATE_LIMIT_GENERAL_BURST: String(LIMIT.burst),
      LOG_LEVEL: 'info',
    };
    replicas = await Promise.all([
      startGatewayReplica('gateway-limit-a', settings),
      startGatewayReplica('gateway-limit-b', settings),
    ]);
    await rateLimitPeersHeard(replicas, 2);
  });

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await closeSessions();
  });

  /**
   * CLIENTS clients send pings for LOAD_MS (longer while the load is not heavy enough), request
   * `n` to the replica `route(n)` picks. Each request is decided between its sending and its
   * answer: the bucket let through all that refilled from before the first answer until after the
   * last refused request was sent, when it was empty.
   */
  async function load(route: (n: number) => number) {
    const session = await createAccountSession();
    const outcomes: { status: number; replica: number }[] = [];
    const startedAt = Date.now();
    let firstAnsweredAt: number | undefined;
    let lastRefusedSentAt: number | undefined;
    let loadedMs: number | undefined;
    const loading = () => {
      const elapsedMs = Date.now() - startedAt;
      const going =
        outcomes.length < 2_000 &&
        elapsedMs < MAX_LOAD_MS &&
        (elapsedMs < LOAD_MS || !heavyEnough(outcomes.length, elapsedMs));
      if (!going) loadedMs ??= elapsedMs;
      return going;
    };
    const client = async () => {
      // Bounded by time and by count.
      while (loading()) {
        const replica = route(outcomes.length);
        const target = replicas[replica]?.target;
        const sentAt = Date.now();
        const response = await session.api.get('/v2/ping', target);
        firstAnsweredAt ??= Date.now();
        if (response.status === 429) lastRefusedSentAt = Math.max(lastRefusedSentAt ?? 0, sentAt);
        outcomes.push({ status: response.status, replica });
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    const elapsedMs = Date.now() - startedAt;
    const decidedForAtLeastMs = Math.max(0, (lastRefusedSentAt ?? 0) - (firstAnsweredAt ?? 0));
    const allowed = outcomes.filter((o) => o.status === 200).length;
    return { outcomes, loadedMs: loadedMs ?? elapsedMs, elapsedMs, decidedForAtLeastMs, allowed };
  }

  it.each<[string, (n: number) => number]>([
    ['all on one replica', () => 1],
    ['spread over both', (n) => n % 2],
  ])('holds within the stated tolerance (%s)', async (_how, route) => {
    const { outcomes, loadedMs, elapsedMs, decidedForAtLeastMs, allowed } = await load(route);
    expect(outcomes.every((o) => o.status === 200 || o.status === 429)).toBe(true);
    // Enough load to exceed the limit well, or the test would show nothing.
    expect(heavyEnough(outcomes.length, loadedMs)).toBe(true);
    // At most what an exact bucket lets through over the whole run, at least what it lets
    // through while it was surely being emptied (both ±10 %).
    expect(allowed).toBeLessThanOrEqual(Math.ceil(exactCeiling(elapsedMs) * (1 + TOLERANCE)));
    expect(allowed).toBeGreaterThanOrEqual(
      Math.floor(exactCeiling(decidedForAtLeastMs) * (1 - TOLERANCE)),
    );
    const limitedOn = new Set(outcomes.filter((o) => o.status === 429).map((o) => o.replica));
    expect(limitedOn.size).toBe(new Set(outcomes.map((o) => o.replica)).size);
  });
});
