import { randomBytes, randomUUID } from 'node:crypto';

import { CommonErrorCode } from '@envoi/contracts-core';
import { DomainsSubjects } from '@envoi/contracts-domains';
import {
  type CreatedWebhookRecord,
  type CreateWebhookBody,
  WebhooksErrorCode,
  WebhooksSubjects,
} from '@envoi/contracts-webhooks';
import { connectNats, RpcClient } from '@envoi/shared-nats';
import { findFreePort, IsolatedPlatform, pollUntil } from '@envoi/shared-testing';
import type { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

import { webhooksDataSourceOptions } from '../src/database/data-source-options';

const SECRET_KEY = randomBytes(32).toString('hex');

let counter = 0;
function uniqueDomain(): string {
  return `w${++counter}-${randomBytes(4).toString('hex')}.example.test`;
}

/**
 * The webhooks service as it runs in production: migrated, then started from dist/ on a private
 * database and bus beside the real domains service (scoped webhooks need domains of the account).
 * WEBHOOKS_INT_KEEP_LOGS keeps the logs.
 */
describe('webhooks service', () => {
  let platform: IsolatedPlatform | undefined;
  let connection: NatsConnection | undefined;
  let dataSource: DataSource | undefined;
  let healthUrl = '';

  beforeAll(async () => {
    await IsolatedPlatform.build();
    platform = await IsolatedPlatform.start({ owner: 'webhooks' });
    await platform.startService('domains', platform.offlineDomainsEnv());
    const healthPort = await findFreePort();
    await platform.startService(
      'webhooks',
      platform.env({
        HEALTH_PORT: String(healthPort),
        WEBHOOK_SECRET_ENCRYPTION_KEY: SECRET_KEY,
      }),
    );
    healthUrl = `http://127.0.0.1:${healthPort}`;
    connection = await connectNats({ servers: [platform.natsUrl], name: 'webhooks-test-client' });
    dataSource = await new DataSource(
      webhooksDataSourceOptions(platform.databaseUrl, 2),
    ).initialize();
  }, 120_000);

  afterAll(async () => {
    await dataSource?.destroy();
    await connection?.drain();
    await platform?.stop();
  });

  const db = (): DataSource => {
    if (!dataSource) throw new Error('the database is not connected');
    return dataSource;
  };

  const rpc = (): RpcClient => {
    if (!connection) throw new Error('the webhooks service did not start');
    return new RpcClient(connection, 10_000);
  };

  async function accountWithDomains(
    count: number,
  ): Promise<{ accountId: string; domains: string[] }> {
    const accountId = randomUUID();
    const domains: string[] = [];
    for (let i = 0; i < count; i++) {
      const created = await rpc().request(DomainsSubjects.createDomain, {
        account_id: accountId,
        body: { domain: uniqueDomain() },
      });
      domains.push(created.domain);
    }
    return { accountId, domains };
  }

  function create(
    accountId: string,
    body: Partial<CreateWebhookBody> = {},
    domains?: string[],
  ): Promise<CreatedWebhookRecord> {
    return rpc().request(WebhooksSubjects.create, {
      account_id: accountId,
      body: { name: 'hook', url: 'https://hooks.example.test/in', scope: 'global', ...body },
      ...(domains ? { domains } : {}),
    });
  }

  describe('create', () => {
    it('answers the record with a one-time prefixed secret, stored only encrypted', async () => {
      const { accountId } = await accountWithDomains(0);
      const created = await create(accountId, { on_delivered: true, domains: ['ignored.test'] });
      expect(created).toMatchObject({
        object: 'webhook',
        name: 'hook',
        url: 'https://hooks.example.test/in',
        enabled: true,
        scope: 'global',
        domains: [],
        on_delivered: true,
        on_failed: false,
        success_count: 0,
        error_count: 0,
        errors_since_last_success: 0,
        last_request_at: null,
      });
      expect(created.secret).toMatch(/^envoi-whsec-[A-Za-z0-9_-]{43}$/);
      const [row] = await db().query<Array<{ secret_ciphertext: string }>>(
        'SELECT secret_ciphertext FROM webhooks.webhooks WHERE id = $1',
        [created.id],
      );
      expect(row?.secret_ciphertext).not.toContain(created.secret.slice('envoi-whsec-'.length));
      const fetched = await rpc().request(WebhooksSubjects.get, {
        account_id: accountId,
        webhook_id: created.id,
      });
      expect(fetched).not.toHaveProperty('secret');
      expect({ ...fetched, secret: created.secret }).toEqual(created);
    });

    it('links a scoped webhook to domains of the account, normalised', async () => {
      const { accountId, domains } = await accountWithDomains(2);
      const created = await create(accountId, {
        scope: 'scoped',
        domains: [domains[1].toUpperCase(), domains[0], `${domains[0]}.`],
      });
      expect([...created.domains].sort()).toEqual([...domains].sort());
      const fetched = await rpc().request(WebhooksSubjects.get, {
        account_id: accountId,
        webhook_id: created.id,
      });
      expect(fetched.domains).toEqual(created.domains);
    });

    it.each([
      [{ scope: 'scoped' as const }, WebhooksErrorCode.InvalidDomains],
      [{ scope: 'scoped' as const, domains: [] }, WebhooksErrorCode.InvalidDomains],
      [{ scope: 'scoped' as const, domains: ['not a name'] }, WebhooksErrorCode.InvalidDomains],
      [
        { scope: 'scoped' as const, domains: ['other.example.test'] },
        WebhooksErrorCode.DomainNotFound,
      ],
      [{ url: 'http://hooks.example.test/in' }, WebhooksErrorCode.InvalidUrl],
      [{ url: 'https://u:p@hooks.example.test/in' }, WebhooksErrorCode.InvalidUrl],
      [{ url: 'hooks.example.test/in' }, WebhooksErrorCode.InvalidUrl],
    ])('refuses %j', async (body, code) => {
      const { accountId } = await accountWithDomains(0);
      await expect(create(accountId, body)).rejects.toMatchObject({ code });
    });

    it('refuses a body that breaks the contract', async () => {
      await expect(
        rpc().request(WebhooksSubjects.create, {
          account_id: randomUUID(),
          body: { name: 'x'.repeat(256), url: 'https://a.test', scope: 'global' },
        }),
      ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
    });

    it('lets a domain-scoped caller create only scoped webhooks of its domains', async () => {
      const { accountId, domains } = await accountWithDomains(2);
      const refused = { code: WebhooksErrorCode.ScopeNotGranted };
      await expect(create(accountId, {}, [domains[0]])).rejects.toMatchObject(refused);
      await expect(
        create(accountId, { scope: 'scoped', domains }, [domains[0]]),
      ).rejects.toMatchObject(refused);
      await expect(
        create(accountId, { scope: 'scoped', domains: [domains[0]] }, [domains[0]]),
      ).resolves.toMatchObject({ domains: [domains[0]] });
    });
  });

  describe('list', () => {
    it('filters by enabled and flags, pages newest first, and restricts to the domains', async () => {
      const { accountId, domains } = await accountWithDomains(2);
      const global = await create(accountId, { on_opened: true });
      const first = await create(accountId, { scope: 'scoped', domains: [domains[0]] });
      const second = await create(accountId, {
        scope: 'scoped',
        domains,
        enabled: false,
        on_opened: true,
      });
      const list = (request: object) =>
        rpc().request(WebhooksSubjects.list, {
          account_id: accountId,
          page: { limit: 100 },
          ...request,
        });
      const ids = async (request: object) => (await list(request)).data.map((w) => w.id);

      expect(await ids({})).toEqual([second.id, first.id, global.id]);
      expect(await ids({ filters: { on_opened: true } })).toEqual([second.id, global.id]);
      expect(await ids({ filters: { enabled: false } })).toEqual([second.id]);
      expect(await ids({ filters: { enabled: true, on_opened: true } })).toEqual([global.id]);
      expect(await ids({ domains: [domains[1]] })).toEqual([second.id]);
      expect(await ids({ domains: [domains[0]] })).toEqual([second.id, first.id]);
      expect(await ids({ domains: ['unrelated.example.test'] })).toEqual([]);

      const page1 = await list({ page: { limit: 2 } });
      expect(page1.data.map((w) => w.id)).toEqual([second.id, first.id]);
      expect(page1.has_more).toBe(true);
      const page2 = await list({ page: { limit: 2, after: page1.next_position } });
      expect(page2.data.map((w) => w.id)).toEqual([global.id]);
      expect(page2.has_more).toBe(false);
    });
  });

  describe('get, update and delete', () => {
    it('hides another account’s webhook and, from a domain-scoped caller, others’ webhooks', async () => {
      const { accountId, domains } = await accountWithDomains(2);
      const global = await create(accountId);
      const scoped = await create(accountId, { scope: 'scoped', domains: [domains[0]] });
      const notFound = { code: WebhooksErrorCode.NotFound };
      const ref = (id: string, extra: object = {}) => ({
        account_id: accountId,
        webhook_id: id,
        ...extra,
      });
      await expect(
        rpc().request(WebhooksSubjects.get, { account_id: randomUUID(), webhook_id: global.id }),
      ).rejects.toMatchObject(notFound);
      await expect(
        rpc().request(WebhooksSubjects.get, ref(global.id, { domains: [domains[0]] })),
      ).rejects.toMatchObject(notFound);
      await expect(
        rpc().request(WebhooksSubjects.get, ref(scoped.id, { domains: [domains[1]] })),
      ).rejects.toMatchObject(notFound);
      await expect(
        rpc().request(WebhooksSubjects.delete, ref(scoped.id, { domains: [domains[1]] })),
      ).rejects.toMatchObject(notFound);
      await expect(
        rpc().request(WebhooksSubjects.get, ref(scoped.id, { domains: [domains[0]] })),
      ).resolves.toMatchObject({ id: scoped.id });
    });

    it('applies the update rules of 1.9', async () => {
      const { accountId, domains } = await accountWithDomains(2);
      const created = await create(accountId, { on_failed: true });
      const update = (changes: object, extra: object = {}) =>
        rpc().request(WebhooksSubjects.update, {
          account_id: accountId,
          webhook_id: created.id,
          changes,
          ...extra,
        });

      // A user's disabling is no event: only the platform's own tells the members.
      await expect(update({ enabled: false })).resolves.toMatchObject({ enabled: false });
      const notices = await db().query<unknown[]>(
        `SELECT id FROM webhooks.outbox WHERE payload->'data'->>'webhook_id' = $1`,
        [created.id],
      );
      expect(notices).toEqual([]);

      const renamed = await update({ name: 'renamed', on_failed: null, on_opened: true });
      expect(renamed).toMatchObject({ name: 'renamed', on_failed: true, on_opened: true });
      expect(Date.parse(renamed.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));

      await expect(update({ scope: 'scoped' })).rejects.toMatchObject({
        code: WebhooksErrorCode.InvalidDomains,
      });
      await expect(update({ scope: 'scoped', domains: [] })).rejects.toMatchObject({
        code: WebhooksErrorCode.InvalidDomains,
      });
      await expect(
        update({ scope: 'scoped', domains: ['other.example.test'] }),
      ).rejects.toMatchObject({ code: WebhooksErrorCode.DomainNotFound });
      await expect(update({ url: 'ftp://x.test/' })).rejects.toMatchObject({
        code: WebhooksErrorCode.InvalidUrl,
      });

      const scoped = await update({ scope: 'scoped', domains });
      expect(scoped.scope).toBe('scoped');
      expect([...scoped.domains].sort()).toEqual([...domains].sort());
      await expect(update({ domains: [domains[1]] })).resolves.toMatchObject({
        domains: [domains[1]],
      });
      // A caller scoped to one domain may not touch the other's webhook or make it global.
      await expect(update({ name: 'x' }, { domains: [domains[0]] })).rejects.toMatchObject({
        code: WebhooksErrorCode.NotFound,
      });
      await expect(update({ scope: 'global' }, { domains: [domains[1]] })).rejects.toMatchObject({
        code: WebhooksErrorCode.ScopeNotGranted,
      });
      await expect(update({ domains: [] })).resolves.toMatchObject({
        scope: 'scoped',
        domains: [],
      });
      await expect(update({ scope: 'global', domains: [domains[0]] })).resolves.toMatchObject({
        scope: 'global',
        domains: [],
      });
      await expect(
        rpc().request(WebhooksSubjects.update, {
          account_id: randomUUID(),
          webhook_id: created.id,
          changes: { name: 'x' },
        }),
      ).rejects.toMatchObject({ code: WebhooksErrorCode.NotFound });
    });

    it('deletes a webhook and its domains', async () => {
      const { accountId, domains } = await accountWithDomains(1);
      const created = await create(accountId, { scope: 'scoped', domains });
      const ref = { account_id: accountId, webhook_id: created.id };
      await expect(rpc().request(WebhooksSubjects.delete, ref)).resolves.toEqual({
        message: 'webhook deleted',
      });
      await expect(rpc().request(WebhooksSubjects.get, ref)).rejects.toMatchObject({
        code: WebhooksErrorCode.NotFound,
      });
      await expect(rpc().request(WebhooksSubjects.delete, ref)).rejects.toMatchObject({
        code: WebhooksErrorCode.NotFound,
      });
      const [row] = await db().query<Array<{ count: number }>>(
        'SELECT count(*)::int AS count FROM webhooks.webhook_domains WHERE webhook_id = $1',
        [created.id],
      );
      expect(row?.count).toBe(0);
    });
  });

  it('refuses a request that breaks its contract', async () => {
    await expect(
      rpc().request(WebhooksSubjects.get, { account_id: 'nope', webhook_id: randomUUID() }),
    ).rejects.toMatchObject({ code: CommonErrorCode.ValidationFailed });
  });

  it('is ready: its database, the bus and its stream consumers answer', async () => {
    // The consumers of the ten event types attach in the background after boot.
    const ready = await pollUntil(
      async () => {
        const response = await fetch(`${healthUrl}/readyz`);
        return { status: response.status, body: await response.text() };
      },
      (answer) => answer.status === 200,
      { what: 'GET /readyz to answer 200', timeoutMs: 20_000 },
    );
    expect(ready.status).toBe(200);
  });
});
