import { randomUUID } from 'node:crypto';

import type { SuppressionRecord } from '@envoi/contracts-suppressions';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { expectError } from '../support/expect-error';

interface SuppressionList {
  object: 'list';
  data: SuppressionRecord[];
  pagination: { has_more: boolean; next_cursor?: string; previous_cursor?: string };
}

function uniqueEmail(): string {
  return `s${randomUUID().slice(0, 12)}@example.test`;
}

function uniqueDomain(): string {
  return `d${randomUUID().slice(0, 12)}.example.test`;
}

const IN_A_MONTH = (): string => new Date(Date.now() + 30 * 86_400_000).toISOString();

describe('suppressions (issue 6)', () => {
  let session: AccountSession;

  beforeAll(async () => {
    session = await createAccountSession();
  });

  afterAll(async () => {
    await closeSessions();
  });

  async function create(
    body: Record<string, unknown>,
    on: AccountSession = session,
  ): Promise<SuppressionRecord> {
    const response = await on.api.post<{ object: 'list'; data: SuppressionRecord[] }>(
      on.path('/suppressions'),
      { expires_at: IN_A_MONTH(), ...body },
    );
    expect(response.status).toBe(201);
    expect(response.body.data).toHaveLength(1);
    const [created] = response.body.data;
    if (!created) throw new Error('no suppression in the 201');
    return created;
  }

  function list(query = '', on: AccountSession = session) {
    return on.api.get<SuppressionList>(on.path(`/suppressions${query}`));
  }

  /** A domain of the account: the domain filters of list and wipe take only those. */
  async function ownDomain(on: AccountSession): Promise<string> {
    const domain = uniqueDomain();
    const response = await on.api.post(on.path('/domains'), { domain });
    expect(response.status).toBe(201);
    return domain;
  }

  it('creates a suppression (201, a list of one, normalised) and lists it', async () => {
    const email = uniqueEmail();
    const domain = uniqueDomain();

    const response = await session.api.post<{ object: string; data: SuppressionRecord[] }>(
      session.path('/suppressions'),
      {
        email: `  ${email.toUpperCase()} `,
        domain: domain.toUpperCase(),
        reason: 'User requested removal',
        expires_at: '2031-06-01T14:00:00+02:00',
      },
    );

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      object: 'list',
      data: [
        {
          object: 'suppression',
          id: expect.any(String) as unknown,
          created_at: expect.any(String) as unknown,
          email,
          domain,
          reason: 'User requested removal',
          expires_at: '2031-06-01T12:00:00.000Z',
        },
      ],
    });
    const listed = await list(`?email=${encodeURIComponent(email)}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual(response.body.data);
    expect(listed.body.pagination).toEqual({ has_more: false });
  });

  it('answers 409 for a duplicate and 400 for a bad email, domain or expiry', async () => {
    const email = uniqueEmail();
    const global = await create({ email });
    expect(global).toMatchObject({ domain: null, reason: null });

    expectError(
      await session.api.post(session.path('/suppressions'), {
        email: email.toUpperCase(),
        expires_at: IN_A_MONTH(),
      }),
      409,
      'suppression already exists',
    );
    // The same address for one domain is another suppression.
    await create({ email, domain: uniqueDomain() });

    for (const body of [
      { email: 'not-an-email', expires_at: IN_A_MONTH() },
      { email: uniqueEmail(), expires_at: '2030-01-01' },
      { email: uniqueEmail() },
      { expires_at: IN_A_MONTH() },
      { email: uniqueEmail(), expires_at: '2020-01-01T00:00:00Z' },
      { email: uniqueEmail(), expires_at: IN_A_MONTH(), domain: 'not a domain' },
      { email: uniqueEmail(), expires_at: IN_A_MONTH(), reason: 'x'.repeat(256) },
    ]) {
      expectError(await session.api.post(session.path('/suppressions'), body), 400);
    }
    expectError(
      await session.api.post(session.path('/suppressions'), {
        email: 'not-an-email',
        expires_at: IN_A_MONTH(),
      }),
      400,
      'email must be a valid email address',
    );
  });

  it('replays an idempotent create byte for byte, and replays its 409 too', async () => {
    const email = uniqueEmail();
    const key = randomUUID();
    const body = { email, expires_at: IN_A_MONTH(), reason: 'replayed' };

    const first = await session.api.post(session.path('/suppressions'), body, {
      headers: { 'idempotency-key': key },
    });
    const replay = await session.api.post(session.path('/suppressions'), body, {
      headers: { 'idempotency-key': key },
    });

    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expect((await list(`?email=${encodeURIComponent(email)}`)).body.data).toHaveLength(1);

    const duplicateKey = randomUUID();
    const conflict = await session.api.post(session.path('/suppressions'), body, {
      headers: { 'idempotency-key': duplicateKey },
    });
    expectError(conflict, 409);
    expect(conflict.headers['idempotent-replayed']).toBeUndefined();
    expect(conflict.headers['retry-after']).toBeUndefined();
    const conflictReplay = await session.api.post(session.path('/suppressions'), body, {
      headers: { 'idempotency-key': duplicateKey },
    });
    expectError(conflictReplay, 409);
    expect(conflictReplay.headers['idempotent-replayed']).toBe('true');
  });

  it('lists newest first with filters and signed cursors', async () => {
    const own = await createAccountSession();
    const domain = await ownDomain(own);
    const first = await create({ email: uniqueEmail(), domain }, own);
    const second = await create({ email: uniqueEmail() }, own);
    const third = await create({ email: uniqueEmail(), domain }, own);

    const page = await list('?limit=2', own);
    expect(page.status).toBe(200);
    expect(page.body.data.map((record) => record.id)).toEqual([third.id, second.id]);
    expect(page.body.pagination.has_more).toBe(true);
    const next = await list(`?limit=2&after=${page.body.pagination.next_cursor ?? ''}`, own);
    expect(next.body.data.map((record) => record.id)).toEqual([first.id]);
    expect(next.body.pagination.has_more).toBe(false);
    const back = await list(`?limit=2&before=${next.body.pagination.previous_cursor ?? ''}`, own);
    expect(back.body.data.map((record) => record.id)).toEqual([third.id, second.id]);

    const byDomain = await list(`?domain=${domain.toUpperCase()}`, own);
    expect(byDomain.body.data.map((record) => record.id)).toEqual([third.id, first.id]);
    const byTime = await list(
      `?from_time=${encodeURIComponent(second.created_at)}&to_time=${encodeURIComponent(third.created_at)}`,
      own,
    );
    expect(byTime.body.data.map((record) => record.id)).toEqual([second.id]);

    // Never another account's, and a cursor of another account's list is refused.
    expect((await list('')).body.data.map((record) => record.id)).not.toContain(first.id);
    expectError(await list(`?after=${page.body.pagination.next_cursor ?? ''}`), 400);

    expectError(await list('?from_time=yesterday', own), 400);
    expectError(await list('?email=nope', own), 400);
    expectError(await list('?limit=0', own), 400);
    expectError(
      await list('?from_time=2030-01-02T00:00:00Z&to_time=2030-01-01T00:00:00Z', own),
      400,
    );
  });

  it('deletes an address’s suppressions, for one domain or all of them', async () => {
    const email = uniqueEmail();
    const domain = uniqueDomain();
    await create({ email });
    await create({ email, domain });
    await create({ email, domain: uniqueDomain() });
    const path = (query: string) => session.path(`/suppressions${query}`);

    const one = await session.api.delete(
      path(`?email=${encodeURIComponent(email.toUpperCase())}&domain=${domain}`),
    );
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ message: '1 suppression deleted' });
    expectError(await session.api.delete(path(`?email=${email}&domain=${domain}`)), 404);

    const rest = await session.api.delete(path(`?email=${encodeURIComponent(email)}`));
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual({ message: '2 suppressions deleted' });
    expect((await list(`?email=${encodeURIComponent(email)}`)).body.data).toEqual([]);

    expectError(await session.api.delete(path(`?email=${uniqueEmail()}`)), 404);
    expectError(await session.api.delete(path('')), 400, 'email is required');
    expectError(await session.api.delete(path('?email=nope')), 400);
  });

  it('wipes one domain’s suppressions or all of them', async () => {
    const own = await createAccountSession();
    const other = await createAccountSession();
    const domain = await ownDomain(own);
    const global = await create({ email: uniqueEmail() }, own);
    await create({ email: uniqueEmail(), domain }, own);
    await create({ email: uniqueEmail(), domain }, own);
    const theirs = await create({ email: uniqueEmail(), domain }, other);

    const scoped = await own.api.delete(own.path(`/suppressions/all?domain=${domain}`));
    expect(scoped.status).toBe(200);
    expect(scoped.body).toEqual({ message: '2 suppressions deleted' });
    expect((await list('', own)).body.data.map((record) => record.id)).toEqual([global.id]);

    const all = await own.api.delete(own.path('/suppressions/all'));
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ message: '1 suppression deleted' });
    expect((await list('', own)).body.data).toEqual([]);
    expect((await list('', other)).body.data.map((record) => record.id)).toEqual([theirs.id]);

    expectError(await own.api.delete(own.path('/suppressions/all?domain=not%20a%20domain')), 400);
  });

  it('enforces the suppressions scopes; wipe needs suppressions:wipe', async () => {
    const own = await createAccountSession();
    const existing = await create({ email: uniqueEmail() }, own);
    const reader = await createKey(own, ['suppressions:read']);
    const writer = await createKey(own, ['suppressions:write']);
    const deleter = await createKey(own, ['suppressions:read', 'suppressions:delete']);
    const wiper = await createKey(own, ['suppressions:wipe']);
    const body = { email: uniqueEmail(), expires_at: IN_A_MONTH() };

    expect((await reader.client.get(own.path('/suppressions'))).status).toBe(200);
    expectError(await reader.client.post(own.path('/suppressions'), body), 403);
    expectError(await writer.client.get(own.path('/suppressions')), 403);
    expect((await writer.client.post(own.path('/suppressions'), body)).status).toBe(201);
    expectError(await writer.client.delete(own.path(`/suppressions?email=${existing.email}`)), 403);

    expectError(await deleter.client.delete(own.path('/suppressions/all')), 403);
    expect((await list('', own)).body.data).toHaveLength(2);
    expect(
      (await deleter.client.delete(own.path(`/suppressions?email=${existing.email}`))).status,
    ).toBe(200);

    expectError(await wiper.client.delete(own.path(`/suppressions?email=${body.email}`)), 403);
    const wiped = await wiper.client.delete(own.path('/suppressions/all'));
    expect(wiped.status).toBe(200);
    expect((await list('', own)).body.data).toEqual([]);
  });
});
