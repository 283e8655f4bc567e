import { randomUUID } from 'node:crypto';

import type { CreatedSmtpCredentialRecord, SmtpCredentialRecord } from '@envoi/contracts-accounts';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { KeyClient } from '../support/api-client';
import { createDomainName } from '../support/domains';
import { expectError } from '../support/expect-error';

interface CredentialList {
  object: 'list';
  data: SmtpCredentialRecord[];
  pagination: { has_more: boolean; next_cursor?: string; previous_cursor?: string };
}

const INSUFFICIENT = 'insufficient permissions for the required scope';

/** Every response is checked against the reference contract by the API client. */
describe('SMTP credentials API (issue 16)', () => {
  let session: AccountSession;

  beforeAll(async () => {
    session = await createAccountSession();
  });

  afterAll(async () => {
    await closeSessions();
  });

  const ownDomain = (on: AccountSession = session): Promise<string> => createDomainName(on);

  async function create(
    body: Record<string, unknown>,
    client: KeyClient = session.api,
    on: AccountSession = session,
  ): Promise<CreatedSmtpCredentialRecord> {
    const response = await client.post<CreatedSmtpCredentialRecord>(on.path('/smtp-credentials'), {
      name: 'relay',
      scope: 'global',
      ...body,
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  it('creates (201 with the one-time password), reads, lists and deletes a credential', async () => {
    const domain = await ownDomain();
    const created = await create({
      name: 'WordPress',
      scope: 'scoped',
      sandbox: true,
      domains: [domain.toUpperCase()],
    });
    expect(created).toMatchObject({
      object: 'credential_smtp',
      name: 'WordPress',
      scope: 'scoped',
      sandbox: true,
      domains: [domain],
    });
    expect(created.username).toMatch(/^envoi-smtp-[a-z0-9]{20}$/);
    expect(created.password).toMatch(/^[A-Za-z0-9]{40}$/);

    const read = await session.api.get<SmtpCredentialRecord>(
      session.path(`/smtp-credentials/${created.id}`),
    );
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('password');
    expect({ ...read.body, password: created.password }).toEqual(created);

    const listed = await session.api.get<CredentialList>(session.path('/smtp-credentials'));
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(created.password);
    expect(listed.body.data.map((c) => c.id)).toContain(created.id);

    const deleted = await session.api.delete(session.path(`/smtp-credentials/${created.id}`));
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: expect.any(String) as unknown });
    expectError(await session.api.get(session.path(`/smtp-credentials/${created.id}`)), 404);
    expectError(await session.api.delete(session.path(`/smtp-credentials/${created.id}`)), 404);
  });

  it('answers 400 for a bad body, a scoped credential without domains or with a foreign one', async () => {
    const other = await ownDomain(await createAccountSession());
    for (const body of [
      {},
      { scope: 'global' },
      { name: 'x' },
      { name: '', scope: 'global' },
      { name: 'x'.repeat(256), scope: 'global' },
      { name: 'x', scope: 'everywhere' },
      { name: 'x', scope: 'global', sandbox: 'yes' },
      { name: 'x', scope: 'scoped', domains: 'a.example' },
      { name: 'x', scope: 'scoped', domains: ['not a domain'] },
    ]) {
      expectError(await session.api.post(session.path('/smtp-credentials'), body), 400);
    }
    for (const domains of [undefined, []]) {
      expectError(
        await session.api.post(session.path('/smtp-credentials'), {
          name: 'x',
          scope: 'scoped',
          domains,
        }),
        400,
        'domains must be a non-empty list for a scoped credential',
      );
    }
    expectError(
      await session.api.post(session.path('/smtp-credentials'), {
        name: 'x',
        scope: 'scoped',
        domains: [other],
      }),
      400,
      `domain '${other}' not found`,
    );
    expectError(await session.api.get(session.path('/smtp-credentials/not-a-uuid')), 400);
  });

  it('pages newest first with after, before and the cursor alias; a bad limit is a 400', async () => {
    const own = await createAccountSession();
    const first = (await create({}, own.api, own)).id;
    const second = (await create({}, own.api, own)).id;
    const third = (await create({}, own.api, own)).id;
    const page = (query: string) =>
      own.api.get<CredentialList>(own.path(`/smtp-credentials${query}`));

    expect((await page('')).body.data.map((c) => c.id)).toEqual([third, second, first]);
    const page1 = await page('?limit=2');
    expect(page1.body.pagination.has_more).toBe(true);
    const cursor = page1.body.pagination.next_cursor ?? '';
    expect((await page(`?limit=2&after=${cursor}`)).body.data.map((c) => c.id)).toEqual([first]);
    expect((await page(`?limit=2&cursor=${cursor}`)).body.data.map((c) => c.id)).toEqual([first]);
    const back = (await page(`?limit=2&after=${cursor}`)).body.pagination.previous_cursor ?? '';
    expect((await page(`?limit=2&before=${back}`)).body.data.map((c) => c.id)).toEqual([
      third,
      second,
    ]);

    for (const query of ['?limit=0', '?limit=101']) {
      expectError(await page(query), 400, 'limit must be between 1 and 100');
    }
    expectError(await page('?after=forged'), 400);
  });

  it('lets a domain-scoped key see, create and delete only credentials of its domains', async () => {
    const mine = await ownDomain();
    const theirs = await ownDomain();
    const global = await create({});
    const ofMine = await create({ scope: 'scoped', domains: [mine] });
    const ofBoth = await create({ scope: 'scoped', domains: [mine, theirs] });
    const ofTheirs = await create({ scope: 'scoped', domains: [theirs] });
    const key = await createKey(session, [
      `smtp-credentials:read:{${mine}}`,
      `smtp-credentials:write:{${mine}}`,
      `smtp-credentials:delete:{${mine}}`,
    ]);

    const listed = await key.client.get<CredentialList>(session.path('/smtp-credentials'));
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((c) => c.id)).toEqual([ofBoth.id, ofMine.id]);
    expect((await key.client.get(session.path(`/smtp-credentials/${ofBoth.id}`))).status).toBe(200);
    for (const hidden of [global, ofTheirs]) {
      expectError(await key.client.get(session.path(`/smtp-credentials/${hidden.id}`)), 404);
      expectError(await key.client.delete(session.path(`/smtp-credentials/${hidden.id}`)), 404);
    }

    const created = await create({ scope: 'scoped', domains: [mine] }, key.client);
    expect(created.domains).toEqual([mine]);
    for (const body of [
      { name: 'x', scope: 'global' },
      { name: 'x', scope: 'scoped', domains: [mine, theirs] },
      { name: 'x', scope: 'scoped', domains: [theirs] },
    ]) {
      expectError(
        await key.client.post(session.path('/smtp-credentials'), body),
        403,
        INSUFFICIENT,
      );
    }

    // Deleting needs the delete scope of at least one linked domain.
    expect((await key.client.delete(session.path(`/smtp-credentials/${ofBoth.id}`))).status).toBe(
      200,
    );
    expect((await session.api.get(session.path(`/smtp-credentials/${ofTheirs.id}`))).status).toBe(
      200,
    );
  });

  it('answers 403 to a key without the needed smtp-credentials scope', async () => {
    const credential = await create({});
    const reader = await createKey(session, ['smtp-credentials:read:all']);
    const none = await createKey(session, ['accounts:read']);
    expectError(await none.client.get(session.path('/smtp-credentials')), 403, INSUFFICIENT);
    expect(
      (await reader.client.get(session.path(`/smtp-credentials/${credential.id}`))).status,
    ).toBe(200);
    expectError(
      await reader.client.post(session.path('/smtp-credentials'), { name: 'x', scope: 'global' }),
      403,
      INSUFFICIENT,
    );
    expectError(
      await reader.client.delete(session.path(`/smtp-credentials/${credential.id}`)),
      403,
      INSUFFICIENT,
    );
  });

  it('replays an idempotent create, password included, and creates one credential', async () => {
    const own = await createAccountSession();
    const key = randomUUID();
    const body = { name: 'idem', scope: 'global' };
    const post = (payload: Record<string, unknown>) =>
      own.api.post<CreatedSmtpCredentialRecord>(own.path('/smtp-credentials'), payload, {
        headers: { 'idempotency-key': key },
      });
    const first = await post(body);
    const replay = await post(body);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.password).toBe(first.body.password);
    const listed = await own.api.get<CredentialList>(own.path('/smtp-credentials'));
    expect(listed.body.data.map((c) => c.id)).toEqual([first.body.id]);
    expect(listed.text).not.toContain(first.body.password);
    expectError(await post({ ...body, name: 'other' }), 422);
  });

  it('serves a sub-account under its own account id, apart from its parent', async () => {
    const parent = await createAccountSession();
    const child = await createAccountSession(undefined, parent.accountId);
    const ofChild = await create({ name: 'child' }, child.api, child);
    const ofParent = await create({ name: 'parent' }, parent.api, parent);

    const childList = await child.api.get<CredentialList>(child.path('/smtp-credentials'));
    expect(childList.body.data.map((c) => c.id)).toEqual([ofChild.id]);
    const parentList = await parent.api.get<CredentialList>(parent.path('/smtp-credentials'));
    expect(parentList.body.data.map((c) => c.id)).toEqual([ofParent.id]);
    expectError(await child.api.get(child.path(`/smtp-credentials/${ofParent.id}`)), 404);
    expect((await child.api.delete(child.path(`/smtp-credentials/${ofChild.id}`))).status).toBe(
      200,
    );
  });
});
