import { randomBytes, randomUUID } from 'node:crypto';

import { CommonErrorCode } from '@envoi/contracts-core';
import { DomainsSubjects } from '@envoi/contracts-domains';
import {
  type CreatedRouteRecord,
  type CreateRouteBody,
  type MessageRoutingPayload,
  RoutesErrorCode,
  RoutesSubjects,
} from '@envoi/contracts-routes';
import { connectNats, RpcClient, subscribeBroadcast } from '@envoi/shared-nats';
import { findFreePort, IsolatedPlatform, pollUntil, WebhookReceiver } from '@envoi/shared-testing';
import type { NatsConnection } from 'nats';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';

import { routesDataSourceOptions } from '../src/database/data-source-options';

const SECRET_KEY = randomBytes(32).toString('hex');

let counter = 0;
function uniqueDomain(): string {
  return `r${++counter}-${randomBytes(4).toString('hex')}.example.test`;
}

/**
 * The routes service as it runs in production: migrated, then started from dist/ on a private
 * database and bus beside the real domains service (patterns name domains of the account, RCPT
 * matching asks who owns a domain). ROUTES_INT_KEEP_LOGS keeps the logs.
 */
describe('routes service', () => {
  let platform: IsolatedPlatform | undefined;
  let connection: NatsConnection | undefined;
  let dataSource: DataSource | undefined;
  let receiver: WebhookReceiver | undefined;
  let healthUrl = '';

  beforeAll(async () => {
    await IsolatedPlatform.build();
    platform = await IsolatedPlatform.start({ owner: 'routes' });
    await platform.startService('domains', platform.offlineDomainsEnv());
    const healthPort = await findFreePort();
    await platform.startService(
      'routes',
      platform.env({
        HEALTH_PORT: String(healthPort),
        ROUTE_SECRET_ENCRYPTION_KEY: SECRET_KEY,
        OUTBOUND_ALLOW_HTTP: 'true',
        OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
        ROUTES_DOMAIN_CACHE_TTL_MS: '0',
      }),
    );
    healthUrl = `http://127.0.0.1:${healthPort}`;
    connection = await connectNats({ servers: [platform.natsUrl], name: 'routes-test-client' });
    dataSource = await new DataSource(
      routesDataSourceOptions(platform.databaseUrl, 2),
    ).initialize();
    receiver = await WebhookReceiver.start();
  }, 120_000);

  afterAll(async () => {
    await receiver?.close();
    await dataSource?.destroy();
    await connection?.drain();
    await platform?.stop();
  });

  const db = (): DataSource => {
    if (!dataSource) throw new Error('the database is not connected');
    return dataSource;
  };

  const bus = (): NatsConnection => {
    if (!connection) throw new Error('the routes service did not start');
    return connection;
  };
  const rpc = (): RpcClient => new RpcClient(bus(), 10_000);

  const loopback = (): WebhookReceiver => {
    if (!receiver) throw new Error('the receiver did not start');
    return receiver;
  };

  async function addDomain(accountId: string, domain = uniqueDomain()): Promise<string> {
    const created = await rpc().request(DomainsSubjects.createDomain, {
      account_id: accountId,
      body: { domain },
    });
    return created.domain;
  }

  async function accountWithDomain(): Promise<{ accountId: string; domain: string }> {
    const accountId = randomUUID();
    return { accountId, domain: await addDomain(accountId) };
  }

  function create(
    accountId: string,
    body: Partial<CreateRouteBody> = {},
    domains?: string[],
  ): Promise<CreatedRouteRecord> {
    return rpc().request(RoutesSubjects.create, {
      account_id: accountId,
      body: { name: 'inbound', url: 'https://hooks.example.test/in', recipient: '', ...body },
      ...(domains ? { domains } : {}),
    });
  }

  it('is ready: its database and the bus answer', async () => {
    const response = await fetch(`${healthUrl}/readyz`);
    expect(response.status).toBe(200);
  });

  describe('create', () => {
    it('answers every field with a one-time prefixed secret, stored only encrypted', async () => {
      const { accountId, domain } = await accountWithDomain();
      const created = await create(accountId, {
        recipient: `Support@${domain.toUpperCase()}`,
        attachments: true,
        strip_replies: true,
      });
      expect(created).toMatchObject({
        object: 'route',
        name: 'inbound',
        url: 'https://hooks.example.test/in',
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
      expect(created.secret).toMatch(/^envoi-rtsec-[A-Za-z0-9_-]{43}$/);
      const [row] = await db().query<
        Array<{ secret_ciphertext: string; domain_id: string | null; domain_name: string }>
      >('SELECT secret_ciphertext, domain_id, domain_name FROM routes.routes WHERE id = $1', [
        created.id,
      ]);
      expect(row.secret_ciphertext).not.toContain(created.secret);
      expect(row.domain_name).toBe(domain);
      expect(row.domain_id).toMatch(/^[0-9a-f-]{36}$/);
      await expect(
        rpc().request(RoutesSubjects.get, { account_id: accountId, route_id: created.id }),
      ).resolves.not.toHaveProperty('secret');
    });

    it.each([
      ['a*b*', RoutesErrorCode.InvalidRecipient],
      ['x@y@z.example', RoutesErrorCode.InvalidRecipient],
      ['support@not-mine.example.test', RoutesErrorCode.DomainNotFound],
    ])('refuses the recipient %j and stores nothing', async (recipient, code) => {
      const { accountId } = await accountWithDomain();
      await expect(create(accountId, { recipient })).rejects.toMatchObject({ code });
      const [{ count }] = await db().query<Array<{ count: string }>>(
        'SELECT count(*) FROM routes.routes WHERE account_id = $1',
        [accountId],
      );
      expect(count).toBe('0');
    });

    it('refuses a URL the outbound guard refuses, and a body breaking the contract', async () => {
      const { accountId } = await accountWithDomain();
      await expect(create(accountId, { url: 'ftp://hooks.example.test/' })).rejects.toMatchObject({
        code: RoutesErrorCode.InvalidUrl,
      });
      await expect(create(accountId, { name: '' })).rejects.toMatchObject({
        code: CommonErrorCode.ValidationFailed,
      });
    });

    it('lets a domain-scoped key create routes of its domains only', async () => {
      const { accountId, domain } = await accountWithDomain();
      const other = await addDomain(accountId);
      await expect(
        create(accountId, { recipient: `*@${domain}` }, [domain]),
      ).resolves.toMatchObject({ recipient: `*@${domain}` });
      for (const recipient of ['support', '', `*@${other}`]) {
        await expect(create(accountId, { recipient }, [domain])).rejects.toMatchObject({
          code: RoutesErrorCode.ScopeNotGranted,
        });
      }
    });
  });

  describe('list, get, update, delete', () => {
    it('lists newest first, by domain, and only what a domain-scoped key may see', async () => {
      const { accountId, domain } = await accountWithDomain();
      const other = await addDomain(accountId);
      const any = await create(accountId, { recipient: 'support' });
      const mine = await create(accountId, { recipient: `a@${domain}` });
      const theirs = await create(accountId, { recipient: `b@${other}` });
      const all = await rpc().request(RoutesSubjects.list, {
        account_id: accountId,
        page: { limit: 10 },
      });
      expect(all.data.map((route) => route.id)).toEqual([theirs.id, mine.id, any.id]);
      const byDomain = await rpc().request(RoutesSubjects.list, {
        account_id: accountId,
        domain: domain.toUpperCase(),
        page: { limit: 10 },
      });
      expect(byDomain.data.map((route) => route.id)).toEqual([mine.id]);
      const scoped = await rpc().request(RoutesSubjects.list, {
        account_id: accountId,
        domains: [other],
        page: { limit: 10 },
      });
      expect(scoped.data.map((route) => route.id)).toEqual([theirs.id]);
      await expect(
        rpc().request(RoutesSubjects.get, {
          account_id: accountId,
          route_id: mine.id,
          domains: [other],
        }),
      ).rejects.toMatchObject({ code: RoutesErrorCode.NotFound });
      await expect(
        rpc().request(RoutesSubjects.get, { account_id: randomUUID(), route_id: mine.id }),
      ).rejects.toMatchObject({ code: RoutesErrorCode.NotFound });
    });

    it('updates what is given, checks the new domain and its scope, keeps the rest', async () => {
      const { accountId, domain } = await accountWithDomain();
      const other = await addDomain(accountId);
      const route = await create(accountId, { recipient: `a@${domain}`, headers: true });
      const updated = await rpc().request(RoutesSubjects.update, {
        account_id: accountId,
        route_id: route.id,
        changes: { name: 'renamed', recipient: `ticket-*@${other}`, enabled: false },
      });
      expect(updated).toMatchObject({
        name: 'renamed',
        recipient: `ticket-*@${other}`,
        enabled: false,
        headers: true,
        url: route.url,
      });
      await expect(
        rpc().request(RoutesSubjects.update, {
          account_id: accountId,
          route_id: route.id,
          changes: { recipient: 'x@unknown.example.test' },
        }),
      ).rejects.toMatchObject({ code: RoutesErrorCode.DomainNotFound });
      // The key holds the old domain only: moving the route to another is refused.
      await expect(
        rpc().request(RoutesSubjects.update, {
          account_id: accountId,
          route_id: route.id,
          changes: { recipient: `a@${domain}` },
          domains: [other],
        }),
      ).rejects.toMatchObject({ code: RoutesErrorCode.ScopeNotGranted });
      await expect(
        rpc().request(RoutesSubjects.get, { account_id: accountId, route_id: route.id }),
      ).resolves.toMatchObject({ recipient: `ticket-*@${other}` });
    });

    it('deletes once, then answers 404', async () => {
      const { accountId } = await accountWithDomain();
      const route = await create(accountId);
      const ref = { account_id: accountId, route_id: route.id };
      await expect(rpc().request(RoutesSubjects.delete, ref)).resolves.toEqual({
        message: 'route deleted',
      });
      await expect(rpc().request(RoutesSubjects.delete, ref)).rejects.toMatchObject({
        code: RoutesErrorCode.NotFound,
      });
    });

    it('removes the routes naming a domain once the domain is deleted, keeps the others', async () => {
      const { accountId, domain } = await accountWithDomain();
      const other = await addDomain(accountId);
      const named = await create(accountId, { recipient: `support@${domain}` });
      const otherDomain = await create(accountId, { recipient: `support@${other}` });
      const everyDomain = await create(accountId, { recipient: '' });
      await rpc().request(DomainsSubjects.deleteDomain, { account_id: accountId, domain });
      const get = (routeId: string) =>
        rpc().request(RoutesSubjects.get, { account_id: accountId, route_id: routeId });
      await pollUntil(
        () =>
          get(named.id).then(
            () => 'present',
            (error: unknown) => (error as { code?: string }).code,
          ),
        (outcome) => outcome === RoutesErrorCode.NotFound,
        { timeoutMs: 20_000, what: 'the route of the deleted domain to go' },
      );
      await expect(get(otherDomain.id)).resolves.toMatchObject({ id: otherDomain.id });
      await expect(get(everyDomain.id)).resolves.toMatchObject({ id: everyDomain.id });
    });
  });

  describe('route sets of the MX', () => {
    it("answers a domain's route set: the enabled routes of the first owner that routes it", async () => {
      const { accountId, domain } = await accountWithDomain();
      const support = await create(accountId, { recipient: `support@${domain}` });
      await create(accountId, { recipient: `sales@${domain}`, enabled: false });
      const routeSet = (name: string) =>
        rpc().request(RoutesSubjects.domainRoutes, { domain: name });

      await expect(routeSet(domain.toUpperCase())).resolves.toEqual({
        outcome: 'routed',
        account_id: accountId,
        domain,
        routes: [{ id: support.id, recipient: `support@${domain}` }],
      });
      await expect(routeSet(uniqueDomain())).resolves.toEqual({ outcome: 'not_routed' });
    });

    it('broadcasts the domains whose route set each change touches, once it is committed', async () => {
      const changes: Array<string | null> = [];
      const subscription = subscribeBroadcast(
        bus(),
        RoutesSubjects.matchChanged,
        (change) => changes.push(change.domain),
        () => undefined,
      );
      await bus().flush();
      const { accountId, domain } = await accountWithDomain();
      const other = await addDomain(accountId);
      const told = (expected: Array<string | null>) =>
        pollUntil(
          () => changes.filter((change) => change === null || [domain, other].includes(change)),
          (seen) => seen.length >= expected.length,
          { what: `the broadcasts ${JSON.stringify(expected)}` },
        ).then((seen) => expect(seen).toEqual(expected));

      const route = await create(accountId, { recipient: `support@${domain}` });
      await told([domain]);
      const ref = { account_id: accountId, route_id: route.id };
      await rpc().request(RoutesSubjects.update, { ...ref, changes: { recipient: `x@${other}` } });
      await told([domain, domain, other]);
      await rpc().request(RoutesSubjects.update, { ...ref, changes: { enabled: false } });
      await told([domain, domain, other, other]);
      await rpc().request(RoutesSubjects.delete, ref);
      await told([domain, domain, other, other, other]);
      await create(accountId, { recipient: `a@${domain}` });
      await rpc().request(DomainsSubjects.deleteDomain, { account_id: accountId, domain });
      await told([domain, domain, other, other, other, domain, domain]);
      await create(accountId, { recipient: '' });
      await told([domain, domain, other, other, other, domain, domain, null]);
      subscription.unsubscribe();
    });
  });

  describe('matchRecipient', () => {
    const match = (recipient: string) =>
      rpc().request(RoutesSubjects.matchRecipient, { recipient });

    it('answers the enabled routes whose pattern takes the address', async () => {
      const { accountId, domain } = await accountWithDomain();
      const support = await create(accountId, { recipient: 'support' });
      const tickets = await create(accountId, { recipient: `ticket-*@${domain}` });
      await create(accountId, { recipient: 'support', enabled: false });
      await expect(match(`Support@${domain}`)).resolves.toEqual({
        outcome: 'route',
        account_id: accountId,
        domain,
        route_ids: [support.id],
      });
      await expect(match(`ticket-42@${domain}`)).resolves.toMatchObject({
        route_ids: [tickets.id],
      });
      await expect(match(`nobody@${domain}`)).resolves.toEqual({ outcome: 'unknown_recipient' });
    });

    it('answers not_routed for domains without enabled routes, unknown ones and relay hacks', async () => {
      const { accountId, domain } = await accountWithDomain();
      await expect(match(`support@${domain}`)).resolves.toEqual({ outcome: 'not_routed' });
      await create(accountId, { recipient: '', enabled: false });
      await expect(match(`support@${domain}`)).resolves.toEqual({ outcome: 'not_routed' });
      await create(accountId, { recipient: '' });
      await expect(match(`support@${domain}`)).resolves.toMatchObject({ outcome: 'route' });
      for (const hack of [
        `@relay.example.test:support@${domain}`,
        `support%other.example.test@${domain}`,
        `"a@b"@${domain}`,
        `support@${uniqueDomain()}`,
      ]) {
        await expect(match(hack)).resolves.toEqual({ outcome: 'not_routed' });
      }
    });

    it('routes a domain two accounts added to the first one that routes it', async () => {
      const first = await accountWithDomain();
      const second = randomUUID();
      await addDomain(second, first.domain);
      const route = await create(second, { recipient: `*@${first.domain}` });
      await expect(match(`x@${first.domain}`)).resolves.toEqual({
        outcome: 'route',
        account_id: second,
        domain: first.domain,
        route_ids: [route.id],
      });
    });
  });

  describe('trigger', () => {
    it('POSTs a signed sample message.routing to the route URL', async () => {
      const { accountId, domain } = await accountWithDomain();
      const endpoint = `trigger-${randomUUID()}`;
      const route = await create(accountId, {
        url: loopback().url(endpoint),
        recipient: `help@${domain}`,
      });
      await expect(
        rpc().request(RoutesSubjects.trigger, { account_id: accountId, route_id: route.id }),
      ).resolves.toEqual({ message: 'sample message.routing delivered (HTTP 200)' });
      const [call] = loopback().callsTo(endpoint);
      const verifier = new Webhook(Buffer.from(route.secret, 'utf8'), { format: 'raw' });
      const payload = verifier.verify(call.body, call.headers) as MessageRoutingPayload;
      expect(payload).toMatchObject({
        type: 'message.routing',
        route_id: route.id,
        data: { to: `help@${domain}` },
      });
    });

    it('says when the URL did not answer 2xx', async () => {
      const { accountId } = await accountWithDomain();
      const endpoint = `failing-${randomUUID()}`;
      loopback().behave(endpoint, () => 503);
      const route = await create(accountId, { url: loopback().url(endpoint) });
      await expect(
        rpc().request(RoutesSubjects.trigger, { account_id: accountId, route_id: route.id }),
      ).resolves.toEqual({ message: 'sample message.routing not delivered (HTTP 503)' });
    });
  });
});
