import { randomUUID } from 'node:crypto';
import path from 'node:path';

import type { CreatedApiKeyRecord } from '@envoi/contracts-accounts';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
} from '../support/account-session';
import type { ApiResponse, KeyClient } from '../support/api-client';
import { createVerifiedDomain } from '../support/domains';

/**
 * The gateway's own route table, read from the compiled gateway so new routes are covered. It is
 * required synchronously (the tests are generated from it at collection time) and by path: the
 * e2e project may not import another app's sources.
 */
interface DeclaredRoute {
  name: string;
  method: string;
  path: string;
}

function gatewayRoutes(): DeclaredRoute[] {
  const dist = path.resolve(__dirname, '../../../../dist/apps/gateway/src');
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { GATEWAY_CONTROLLERS } = require(path.join(dist, 'controllers.js')) as {
    GATEWAY_CONTROLLERS: readonly unknown[];
  };
  const { declaredRoutes } = require(path.join(dist, 'routes.js')) as {
    declaredRoutes(controllers: readonly unknown[]): DeclaredRoute[];
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  return declaredRoutes(GATEWAY_CONTROLLERS);
}

/** v2 routes that name no account: they hold no tenant's data. */
const TENANTLESS_ROUTES = new Set(['GET /v2/ping']);
const REFUSED = [401, 403, 404];

/** One tenant's data, every identifier of which must stay out of other tenants' responses. */
interface Tenant {
  session: AccountSession;
  domain: string;
  keyId: string;
  memberId: string;
  messageId: string;
  suppressedEmail: string;
  webhookId: string;
  webhookDeliveryId: string;
  smtpCredentialId: string;
  smtpUsername: string;
  routeId: string;
}

async function provision(session: AccountSession, parent: AccountSession): Promise<Tenant> {
  const domain = (await createVerifiedDomain(session)).domain;
  const key = await parent.api.post<CreatedApiKeyRecord>(
    parent.path(`/sub-accounts/${session.accountId}/api-keys`),
    { label: `iso-${randomUUID().slice(0, 8)}`, scopes: ['accounts:read'] },
  );
  const member = await session.api.post<{ user_id: string }>(session.path('/members'), {
    email: `m-${randomUUID().slice(0, 8)}@example.com`,
    role: 'Developer',
  });
  const suppressedEmail = `s-${randomUUID().slice(0, 8)}@example.net`;
  const suppression = await session.api.post(session.path('/suppressions'), {
    email: suppressedEmail,
    expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  });
  const webhook = await session.api.post<{ id: string }>(session.path('/webhooks'), {
    name: 'isolated',
    url: 'https://hooks.example.net/in',
    scope: 'scoped',
    domains: [domain],
    // Disabled: its sample delivery below stays pending, never sent.
    enabled: false,
  });
  // Beyond the reference contract (README, webhook deliveries).
  const triggered = await session.api.post<{ data: { id: string }[] }>(
    session.path(`/webhooks/${webhook.body.id}/trigger`),
    { events: ['message.delivered'] },
    { contract: 'skip' },
  );
  const smtpCredential = await session.api.post<{ id: string; username: string }>(
    session.path('/smtp-credentials'),
    { name: 'isolated', scope: 'scoped', domains: [domain] },
  );
  const route = await session.api.post<{ id: string }>(session.path('/routes'), {
    name: 'isolated',
    url: 'https://hooks.example.net/inbound',
    recipient: `support@${domain}`,
    enabled: false,
  });
  const sent = await session.api.post<{ data: { id: string }[] }>(session.path('/messages'), {
    from: { email: `app@${domain}` },
    recipients: [{ email: `r-${randomUUID().slice(0, 8)}@example.net` }],
    subject: 'isolated',
    text_content: 'isolated',
  });
  for (const [what, response, status] of [
    ['key', key, 201],
    ['member', member, 201],
    ['suppression', suppression, 201],
    ['webhook', webhook, 201],
    ['webhook trigger', triggered, 202],
    ['smtp credential', smtpCredential, 201],
    ['route', route, 201],
    ['message', sent, 202],
  ] as const) {
    if (response.status !== status) throw new Error(`${what}: ${response.status} ${response.text}`);
  }
  return {
    session,
    domain,
    keyId: key.body.id,
    memberId: member.body.user_id,
    messageId: sent.body.data[0]?.id ?? '',
    suppressedEmail,
    webhookId: webhook.body.id,
    webhookDeliveryId: triggered.body.data[0]?.id ?? '',
    smtpCredentialId: smtpCredential.body.id,
    smtpUsername: smtpCredential.body.username,
    routeId: route.body.id,
  };
}

function identifiers(tenant: Tenant): string[] {
  return [
    tenant.session.accountId,
    tenant.domain,
    tenant.keyId,
    tenant.memberId,
    tenant.messageId.replace(/^<|>$/g, '').split('@')[0] ?? '',
    tenant.suppressedEmail,
    tenant.webhookId,
    tenant.webhookDeliveryId,
    tenant.smtpCredentialId,
    tenant.smtpUsername,
    tenant.routeId,
  ];
}

/** The route's path with the victim's ids; `accountId` decides whose account the path names. */
function concretePath(route: DeclaredRoute, accountId: string, victim: Tenant): string {
  const values: Record<string, string> = {
    account_id: accountId,
    sub_account_id: victim.session.accountId,
    key_id: victim.keyId,
    user_id: victim.memberId,
    domain: victim.domain,
    message_id: encodeURIComponent(victim.messageId),
    webhook_id: victim.webhookId,
    delivery_id: victim.webhookDeliveryId,
    credential_id: victim.smtpCredentialId,
    route_id: victim.routeId,
  };
  const filled = route.path.replace(/:([a-z_]+)/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`${route.name}: no value for :${name}`);
    return value;
  });
  return route.name.startsWith('DELETE /v2/accounts/:account_id/suppressions')
    ? `${filled}?email=${encodeURIComponent(victim.suppressedEmail)}&domain=${victim.domain}`
    : filled;
}

function call(client: KeyClient, method: string, target: string): Promise<ApiResponse> {
  return client.send(method, target, method === 'GET' || method === 'DELETE' ? {} : { body: {} });
}

describe('sub-account isolation: every v2 route, 0 leaks', () => {
  let parent: AccountSession;
  let attacker: Tenant;
  let victim: Tenant;
  const routes = gatewayRoutes().filter((route) => route.path.startsWith('/v2/'));
  const accountRoutes = routes.filter((route) => route.path.startsWith('/v2/accounts/:account_id'));
  const exercised = new Set<string>();

  beforeAll(async () => {
    parent = await createAccountSession();
    // One after the other: the e2e DNS zone takes one publication at a time.
    attacker = await provision(await createAccountSession(undefined, parent.accountId), parent);
    victim = await provision(await createAccountSession(undefined, parent.accountId), parent);
  }, 120_000);
  afterAll(() => closeSessions());

  it('knows every v2 route: account routes, or ones that name no tenant', () => {
    expect(accountRoutes.length).toBeGreaterThan(20);
    const others = routes.filter((route) => !accountRoutes.includes(route));
    expect(
      others.map((route) => route.name).filter((name) => !TENANTLESS_ROUTES.has(name)),
    ).toEqual([]);
  });

  it("refuses the sibling's and the parent's keys on the victim's paths", async () => {
    const leaks: string[] = [];
    for (const route of accountRoutes) {
      const target = concretePath(route, victim.session.accountId, victim);
      for (const [who, client] of [
        ['sibling', attacker.session.api],
        ['parent', parent.api],
      ] as const) {
        const response = await call(client, route.method, target);
        if (!REFUSED.includes(response.status)) {
          leaks.push(`${who} ${route.name}: ${response.status} ${response.text.slice(0, 200)}`);
        }
      }
      exercised.add(route.name);
    }
    expect(leaks).toEqual([]);
  }, 300_000);

  it("finds none of the victim's data through the sibling's own paths", async () => {
    const secrets = identifiers(victim);
    const leaks: string[] = [];
    for (const route of accountRoutes) {
      if (route.method !== 'GET' && route.method !== 'DELETE') continue;
      const target = concretePath(route, attacker.session.accountId, victim);
      const response = await call(attacker.session.api, route.method, target);
      const named = target.includes(victim.session.accountId) || target.includes(victim.domain);
      const refusedById = !named || REFUSED.includes(response.status);
      const leaked = secrets.filter(
        (secret) => secret !== '' && response.text.includes(secret) && !target.includes(secret),
      );
      if (!refusedById || leaked.length > 0) {
        leaks.push(`${route.name}: ${response.status} ${leaked.join(', ')}`);
      }
    }
    expect(leaks).toEqual([]);
  }, 300_000);

  it("still holds all of the victim's data, read with its own key", async () => {
    const api = victim.session.api;
    const reads = [
      await api.get(victim.session.path(`/domains/${victim.domain}`)),
      // A child's keys are read through its parent.
      await parent.api.get(
        parent.path(`/sub-accounts/${victim.session.accountId}/api-keys/${victim.keyId}`),
      ),
      await api.get(victim.session.path(`/messages/${encodeURIComponent(victim.messageId)}`)),
      await api.get(victim.session.path(`/webhooks/${victim.webhookId}`)),
      await api.get(victim.session.path(`/smtp-credentials/${victim.smtpCredentialId}`)),
      await api.get(victim.session.path(`/routes/${victim.routeId}`)),
    ];
    expect(reads.map((read) => read.status)).toEqual([200, 200, 200, 200, 200, 200]);
    expect((await api.get(victim.session.path('/members'))).text).toContain(victim.memberId);
    expect((await api.get(victim.session.path('/suppressions'))).text).toContain(
      victim.suppressedEmail,
    );
  });

  it('exercised every account route of the gateway', () => {
    expect(accountRoutes.map((route) => route.name).filter((name) => !exercised.has(name))).toEqual(
      [],
    );
  });
});
