import { randomUUID } from 'node:crypto';

import type { CreatedRouteRecord, RouteRecord } from '@envoi/contracts-routes';
import { WebhookPayloadValidator, WebhookReceiver } from '@envoi/shared-testing';
import { Webhook } from 'standardwebhooks';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import type { KeyClient, RequestOptions } from '../support/api-client';
import { webhooksContractFile } from '../support/contract/contract-files';
import { createDomainName } from '../support/domains';
import { expectError } from '../support/expect-error';

interface RouteList {
  object: 'list';
  data: RouteRecord[];
  pagination: { has_more: boolean; next_cursor?: string; previous_cursor?: string };
}

const URL = 'https://hooks.example.net/inbound';
const INSUFFICIENT = 'insufficient permissions for the required scope';
// POST …/routes/{id}/trigger is beyond the reference contract (platform notes 1.12, README).
const BEYOND_CONTRACT: RequestOptions = { contract: 'skip' };

/** Every response is checked against the reference contract by the API client. */
describe('routes API (issue 17)', () => {
  let session: AccountSession;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    session = await createAccountSession();
    receiver = await WebhookReceiver.start();
  });

  afterAll(async () => {
    await receiver.close();
    await closeSessions();
  });

  async function create(
    body: Record<string, unknown>,
    client: KeyClient = session.api,
  ): Promise<CreatedRouteRecord> {
    const response = await client.post<CreatedRouteRecord>(session.path('/routes'), {
      name: 'inbound',
      url: URL,
      recipient: '',
      ...body,
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  it('creates (201 with the one-time secret), reads, updates and deletes a route', async () => {
    const domain = await createDomainName(session);
    const created = await create({
      name: 'Support',
      recipient: `support@${domain}`,
      attachments: true,
      strip_replies: true,
    });
    expect(created).toMatchObject({
      object: 'route',
      name: 'Support',
      url: URL,
      recipient: `support@${domain}`,
      enabled: true,
      attachments: true,
      headers: false,
      group_by_message_id: false,
      strip_replies: true,
      success_count: 0,
      error_count: 0,
      errors_since_last_success: 0,
      last_request_at: null,
    });
    expect(created.secret).toMatch(/^envoi-rtsec-[A-Za-z0-9_-]{32,}$/);

    const read = await session.api.get<RouteRecord>(session.path(`/routes/${created.id}`));
    expect(read.status).toBe(200);
    expect({ ...read.body, secret: created.secret }).toEqual(created);

    const updated = await session.api.put<RouteRecord>(session.path(`/routes/${created.id}`), {
      name: null,
      recipient: 'ticket-*',
      enabled: false,
      group_by_message_id: true,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: 'Support',
      recipient: 'ticket-*',
      enabled: false,
      attachments: true,
      group_by_message_id: true,
    });
    expect(updated.body).not.toHaveProperty('secret');

    const deleted = await session.api.delete(session.path(`/routes/${created.id}`));
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: expect.any(String) as unknown });
    expectError(await session.api.get(session.path(`/routes/${created.id}`)), 404);
    expectError(await session.api.delete(session.path(`/routes/${created.id}`)), 404);
  });

  it('answers 400 for a bad body, url, pattern, or a domain not of the account', async () => {
    const other = await createDomainName(await createAccountSession());
    for (const body of [
      { url: URL, recipient: '' },
      { name: 'x', recipient: '' },
      { name: 'x', url: URL },
      { name: 'x'.repeat(256), url: URL, recipient: '' },
      { name: 'x', url: 'not a url', recipient: '' },
      { name: 'x', url: 'https://10.0.0.1/in', recipient: '' },
      { name: 'x', url: 'ftp://hooks.example.net/in', recipient: '' },
      { name: 'x', url: URL, recipient: '', enabled: 'yes' },
      { name: 'x', url: URL, recipient: 'a*b*' },
      { name: 'x', url: URL, recipient: 'x'.repeat(256) },
    ]) {
      expectError(await session.api.post(session.path('/routes'), body), 400);
    }
    expectError(
      await session.api.post(session.path('/routes'), { name: 'x', url: URL, recipient: 'a*b*' }),
      400,
      "invalid recipient 'a*b*': must be a local part (support), a pattern with one * (ticket-*, *-support) or either with a domain of the account (support@example.com)",
    );
    expectError(
      await session.api.post(session.path('/routes'), {
        name: 'x',
        url: URL,
        recipient: `support@${other}`,
      }),
      400,
      `domain '${other}' not found`,
    );
    expectError(await session.api.get(session.path('/routes/not-a-uuid')), 400);
    expectError(await session.api.get(session.path('/routes?limit=0')), 400);
  });

  it('lists newest first, page by page, filtered by domain', async () => {
    const own = await createAccountSession();
    const domain = await createDomainName(own);
    const post = async (recipient: string) => {
      const response = await own.api.post<CreatedRouteRecord>(own.path('/routes'), {
        name: 'r',
        url: URL,
        recipient,
      });
      expect(response.status).toBe(201);
      return response.body.id;
    };
    const first = await post('support');
    const second = await post(`*@${domain}`);
    const third = await post(`ticket-*@${domain}`);
    const ids = async (query: string) =>
      (await own.api.get<RouteList>(own.path(`/routes${query}`))).body.data.map((r) => r.id);

    expect(await ids('')).toEqual([third, second, first]);
    expect(await ids(`?domain=${domain}`)).toEqual([third, second]);
    const page1 = await own.api.get<RouteList>(own.path('/routes?limit=2'));
    expect(page1.body.pagination.has_more).toBe(true);
    const page2 = await own.api.get<RouteList>(
      own.path(`/routes?limit=2&after=${page1.body.pagination.next_cursor ?? ''}`),
    );
    expect(page2.body.data.map((r) => r.id)).toEqual([first]);
  });

  it('lets a domain-scoped key see and manage only routes of its domains', async () => {
    const mine = await createDomainName(session);
    const theirs = await createDomainName(session);
    const anyDomain = await create({ recipient: 'help' });
    const ofMine = await create({ recipient: `help@${mine}` });
    const ofTheirs = await create({ recipient: `help@${theirs}` });
    const key = await createKey(session, [
      `routes:read:{${mine}}`,
      `routes:write:{${mine}}`,
      `routes:delete:{${mine}}`,
    ]);

    expectError(
      await key.client.get(session.path('/routes')),
      400,
      'domain is required for a domain-scoped api key',
    );
    const listed = await key.client.get<RouteList>(session.path(`/routes?domain=${mine}`));
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((r) => r.id)).toEqual([ofMine.id]);
    const foreign = await key.client.get<RouteList>(session.path(`/routes?domain=${theirs}`));
    expect(foreign.body.data).toEqual([]);
    expect((await key.client.get(session.path(`/routes/${ofMine.id}`))).status).toBe(200);
    expectError(await key.client.get(session.path(`/routes/${anyDomain.id}`)), 404);
    expectError(await key.client.get(session.path(`/routes/${ofTheirs.id}`)), 404);

    // Creating: a pattern of its domain only; one of every domain needs write:all.
    expect((await create({ recipient: `*@${mine}` }, key.client)).recipient).toBe(`*@${mine}`);
    for (const recipient of ['support', '', `x@${theirs}`]) {
      expectError(
        await key.client.post(session.path('/routes'), { name: 'x', url: URL, recipient }),
        403,
        INSUFFICIENT,
      );
    }

    // Updating: the old domain's scope and, for a new pattern, the new one's.
    const put = (id: string, body: Record<string, unknown>) =>
      key.client.put<RouteRecord>(session.path(`/routes/${id}`), body);
    expect((await put(ofMine.id, { name: 'renamed' })).status).toBe(200);
    expectError(await put(ofMine.id, { recipient: `help@${theirs}` }), 403, INSUFFICIENT);
    expectError(await put(ofMine.id, { recipient: 'help' }), 403, INSUFFICIENT);
    expectError(await put(ofTheirs.id, { recipient: `help@${mine}` }), 404);

    expectError(await key.client.delete(session.path(`/routes/${ofTheirs.id}`)), 404);
    expect((await key.client.delete(session.path(`/routes/${ofMine.id}`))).status).toBe(200);
  });

  it('answers 403 to a key without the routes scopes', async () => {
    const route = await create({});
    const reader = await createKey(session, ['routes:read:all']);
    const none = await createKey(session, ['accounts:read']);
    expectError(await none.client.get(session.path('/routes')), 403, INSUFFICIENT);
    expect((await reader.client.get(session.path(`/routes/${route.id}`))).status).toBe(200);
    expectError(
      await reader.client.post(session.path('/routes'), { name: 'x', url: URL, recipient: '' }),
      403,
      INSUFFICIENT,
    );
    expectError(
      await reader.client.put(session.path(`/routes/${route.id}`), { name: 'x' }),
      403,
      INSUFFICIENT,
    );
    expectError(await reader.client.delete(session.path(`/routes/${route.id}`)), 403, INSUFFICIENT);
  });

  it('replays an idempotent create, secret included, and creates one route', async () => {
    const own = await createAccountSession();
    const key = randomUUID();
    const body = { name: 'idem', url: URL, recipient: 'support', headers: true };
    const first = await own.api.post<CreatedRouteRecord>(own.path('/routes'), body, {
      headers: { 'idempotency-key': key },
    });
    const replay = await own.api.post<CreatedRouteRecord>(own.path('/routes'), body, {
      headers: { 'idempotency-key': key },
    });
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.text).toBe(first.text);
    const listed = await own.api.get<RouteList>(own.path('/routes'));
    expect(listed.body.data.map((r) => r.id)).toEqual([first.body.id]);
    expectError(
      await own.api.post(
        own.path('/routes'),
        { ...body, name: 'other' },
        { headers: { 'idempotency-key': key } },
      ),
      422,
    );
  });

  it('triggers a sample message.routing that reaches the route URL, signed and as webhooks.yaml says', async () => {
    const domain = await createDomainName(session);
    const endpoint = `route-${randomUUID()}`;
    const route = await create({ url: receiver.url(endpoint), recipient: `help@${domain}` });
    const triggered = await session.api.post<{ message: string }>(
      session.path(`/routes/${route.id}/trigger`),
      {},
      BEYOND_CONTRACT,
    );
    expect(triggered.status).toBe(200);
    expect(triggered.body).toEqual({ message: 'sample message.routing delivered (HTTP 200)' });

    const [call] = receiver.callsTo(endpoint);
    expect(call?.method).toBe('POST');
    const verifier = new Webhook(Buffer.from(route.secret, 'utf8'), { format: 'raw' });
    const payload = verifier.verify(call?.body ?? '', call?.headers ?? {});
    const validator = new WebhookPayloadValidator(webhooksContractFile());
    expect(validator.violations('message.routing', payload)).toEqual([]);
    expect(payload).toMatchObject({
      type: 'message.routing',
      route_id: route.id,
      data: { to: `help@${domain}` },
    });

    expectError(
      await session.api.post(session.path(`/routes/${randomUUID()}/trigger`), {}, BEYOND_CONTRACT),
      404,
    );
  });
});
