import { randomUUID } from 'node:crypto';

import type { CreatedWebhookRecord, WebhookRecord } from '@envoi/contracts-webhooks';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { KeyClient } from '../support/api-client';
import { createDomainName } from '../support/domains';
import { expectError } from '../support/expect-error';

interface WebhookList {
  object: 'list';
  data: WebhookRecord[];
  pagination: { has_more: boolean; next_cursor?: string; previous_cursor?: string };
}

const URL = 'https://hooks.example.net/envoi';
const INSUFFICIENT = 'insufficient permissions for the required scope';

/** Every response is checked against the reference contract by the API client. */
describe('webhooks API (issue 15)', () => {
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
  ): Promise<CreatedWebhookRecord> {
    const response = await client.post<CreatedWebhookRecord>(session.path('/webhooks'), {
      name: 'hook',
      url: URL,
      scope: 'global',
      ...body,
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  it('creates (201 with the one-time secret), reads, updates and deletes a webhook', async () => {
    const created = await create({ name: 'Delivery Webhook', on_delivered: true });
    expect(created).toMatchObject({
      object: 'webhook',
      name: 'Delivery Webhook',
      url: URL,
      enabled: true,
      scope: 'global',
      domains: [],
      on_delivered: true,
      on_reception: false,
      success_count: 0,
      error_count: 0,
      errors_since_last_success: 0,
      last_request_at: null,
    });
    expect(created.secret).toMatch(/^envoi-whsec-[A-Za-z0-9_-]{32,}$/);

    const read = await session.api.get<WebhookRecord>(session.path(`/webhooks/${created.id}`));
    expect(read.status).toBe(200);
    expect({ ...read.body, secret: created.secret }).toEqual(created);

    const domain = await ownDomain();
    const updated = await session.api.put<WebhookRecord>(session.path(`/webhooks/${created.id}`), {
      name: null,
      enabled: false,
      scope: 'scoped',
      domains: [domain.toUpperCase()],
      on_opened: true,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: 'Delivery Webhook',
      enabled: false,
      scope: 'scoped',
      domains: [domain],
      on_delivered: true,
      on_opened: true,
    });
    expect(updated.body).not.toHaveProperty('secret');

    const deleted = await session.api.delete(session.path(`/webhooks/${created.id}`));
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: expect.any(String) as unknown });
    expectError(await session.api.get(session.path(`/webhooks/${created.id}`)), 404);
    expectError(await session.api.delete(session.path(`/webhooks/${created.id}`)), 404);
  });

  it('answers 400 for a bad body, url, scope, or a domain not of the account', async () => {
    const other = await ownDomain(await createAccountSession());
    for (const body of [
      { url: URL, scope: 'global' },
      { name: 'x', scope: 'global' },
      { name: 'x', url: URL },
      { name: 'x'.repeat(256), url: URL, scope: 'global' },
      { name: 'x', url: URL, scope: 'everywhere' },
      { name: 'x', url: 'not a url', scope: 'global' },
      { name: 'x', url: 'https://10.0.0.1/in', scope: 'global' },
      { name: 'x', url: 'https://0x7f000001.example.invalid@169.254.169.254/', scope: 'global' },
      { name: 'x', url: 'ftp://hooks.example.net/in', scope: 'global' },
      { name: 'x', url: 'https://user:pw@hooks.example.net/in', scope: 'global' },
      { name: 'x', url: URL, scope: 'global', enabled: 'yes' },
    ]) {
      expectError(await session.api.post(session.path('/webhooks'), body), 400);
    }
    expectError(
      await session.api.post(session.path('/webhooks'), { name: 'x', url: URL, scope: 'scoped' }),
      400,
      'domains must be a non-empty list for a scoped webhook',
    );
    expectError(
      await session.api.post(session.path('/webhooks'), {
        name: 'x',
        url: URL,
        scope: 'scoped',
        domains: [],
      }),
      400,
    );
    expectError(
      await session.api.post(session.path('/webhooks'), {
        name: 'x',
        url: URL,
        scope: 'scoped',
        domains: [other],
      }),
      400,
      `domain '${other}' not found`,
    );
    const global = await create({});
    expectError(
      await session.api.put(session.path(`/webhooks/${global.id}`), { scope: 'scoped' }),
      400,
      'domains must be a non-empty list for a scoped webhook',
    );
    expectError(await session.api.get(session.path('/webhooks/not-a-uuid')), 400);
  });

  it('lists with boolean filters and cursors; a non-boolean filter is a 400', async () => {
    const own = await createAccountSession();
    const post = async (body: Record<string, unknown>) => {
      const response = await own.api.post<CreatedWebhookRecord>(own.path('/webhooks'), {
        name: 'h',
        url: URL,
        scope: 'global',
        ...body,
      });
      expect(response.status).toBe(201);
      return response.body.id;
    };
    const first = await post({ on_failed: true });
    const second = await post({ enabled: false });
    const third = await post({ on_failed: true, on_dns_error: true });
    const ids = async (query: string) =>
      (await own.api.get<WebhookList>(own.path(`/webhooks${query}`))).body.data.map((w) => w.id);

    expect(await ids('')).toEqual([third, second, first]);
    expect(await ids('?on_failed=true')).toEqual([third, first]);
    expect(await ids('?enabled=false')).toEqual([second]);
    expect(await ids('?on_failed=true&on_dns_error=false')).toEqual([first]);

    const page1 = await own.api.get<WebhookList>(own.path('/webhooks?limit=2'));
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await own.api.get<WebhookList>(
      own.path(`/webhooks?limit=2&after=${page1.body.pagination.next_cursor ?? ''}`),
    );
    expect(page2.body.data.map((w) => w.id)).toEqual([first]);

    for (const query of ['?enabled=yes', '?on_delivered=1', '?on_dns_error=maybe', '?limit=0']) {
      expectError(await own.api.get(own.path(`/webhooks${query}`)), 400);
    }
  });

  it('lets a domain-scoped key see and manage only webhooks of its domains', async () => {
    const mine = await ownDomain();
    const theirs = await ownDomain();
    const global = await create({});
    const ofMine = await create({ scope: 'scoped', domains: [mine] });
    const ofBoth = await create({ scope: 'scoped', domains: [mine, theirs] });
    const ofTheirs = await create({ scope: 'scoped', domains: [theirs] });
    const key = await createKey(session, [
      `webhooks:read:{${mine}}`,
      `webhooks:write:{${mine}}`,
      `webhooks:delete:{${mine}}`,
    ]);

    const listed = await key.client.get<WebhookList>(session.path('/webhooks'));
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((w) => w.id)).toEqual([ofBoth.id, ofMine.id]);
    expect((await key.client.get(session.path(`/webhooks/${ofBoth.id}`))).status).toBe(200);
    expectError(await key.client.get(session.path(`/webhooks/${global.id}`)), 404);
    expectError(await key.client.get(session.path(`/webhooks/${ofTheirs.id}`)), 404);

    // Creating: scoped to its domains only; global needs write:all.
    const created = await create({ scope: 'scoped', domains: [mine] }, key.client);
    expect(created.domains).toEqual([mine]);
    for (const body of [
      { name: 'x', url: URL, scope: 'global' },
      { name: 'x', url: URL, scope: 'scoped', domains: [mine, theirs] },
    ]) {
      expectError(await key.client.post(session.path('/webhooks'), body), 403, INSUFFICIENT);
    }

    // Updating: not to global, not to another domain, not a webhook also of another domain.
    const put = (id: string, body: Record<string, unknown>) =>
      key.client.put<WebhookRecord>(session.path(`/webhooks/${id}`), body);
    expect((await put(ofMine.id, { name: 'renamed' })).status).toBe(200);
    expectError(await put(ofMine.id, { scope: 'global' }), 403, INSUFFICIENT);
    expectError(await put(ofMine.id, { domains: [theirs] }), 403, INSUFFICIENT);
    expectError(await put(ofBoth.id, { name: 'x' }), 403, INSUFFICIENT);
    expectError(await put(ofTheirs.id, { name: 'x' }), 404);

    // Deleting: a webhook linked to one of its domains.
    expectError(await key.client.delete(session.path(`/webhooks/${ofTheirs.id}`)), 404);
    expect((await key.client.delete(session.path(`/webhooks/${ofMine.id}`))).status).toBe(200);
  });

  it('answers 403 to a key without the webhooks scopes', async () => {
    const webhook = await create({});
    const reader = await createKey(session, ['webhooks:read:all']);
    const none = await createKey(session, ['accounts:read']);
    expectError(await none.client.get(session.path('/webhooks')), 403, INSUFFICIENT);
    expect((await reader.client.get(session.path(`/webhooks/${webhook.id}`))).status).toBe(200);
    expectError(
      await reader.client.post(session.path('/webhooks'), { name: 'x', url: URL, scope: 'global' }),
      403,
      INSUFFICIENT,
    );
    expectError(
      await reader.client.put(session.path(`/webhooks/${webhook.id}`), { name: 'x' }),
      403,
      INSUFFICIENT,
    );
    expectError(
      await reader.client.delete(session.path(`/webhooks/${webhook.id}`)),
      403,
      INSUFFICIENT,
    );
  });

  it('replays an idempotent create, secret included, and creates one webhook', async () => {
    const own = await createAccountSession();
    const key = randomUUID();
    const body = { name: 'idem', url: URL, scope: 'global', on_bounced: true };
    const first = await own.api.post<CreatedWebhookRecord>(own.path('/webhooks'), body, {
      headers: { 'idempotency-key': key },
    });
    const replay = await own.api.post<CreatedWebhookRecord>(own.path('/webhooks'), body, {
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    expect(replay.body.secret).toBe(first.body.secret);
    const listed = await own.api.get<WebhookList>(own.path('/webhooks'));
    expect(listed.body.data.map((w) => w.id)).toEqual([first.body.id]);
    expectError(
      await own.api.post(
        own.path('/webhooks'),
        { ...body, name: 'other' },
        {
          headers: { 'idempotency-key': key },
        },
      ),
      422,
    );
  });
});
