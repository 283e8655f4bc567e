import { randomUUID } from 'node:crypto';

import type { DomainRecord } from '@envoi/contracts-domains';

import {
  type AccountSession,
  closeSessions,
  createAccountSession,
  createKey,
} from '../support/account-session';
import { publishRecords, uniqueDomain } from '../support/domains';
import { expectError } from '../support/expect-error';

describe('sending domains (issue 4)', () => {
  let session: AccountSession;

  beforeAll(async () => {
    session = await createAccountSession();
  });

  afterAll(async () => {
    await closeSessions();
  });

  async function createDomain(name = uniqueDomain()): Promise<DomainRecord> {
    const response = await session.api.post<DomainRecord>(session.path('/domains'), {
      domain: name,
    });
    expect(response.status).toBe(201);
    return response.body;
  }

  it('creates a domain with the DNS records to publish and no private key', async () => {
    const name = uniqueDomain();
    const response = await session.api.post<DomainRecord>(session.path('/domains'), {
      domain: `  ${name.toUpperCase()}. `,
    });

    expect(response.status).toBe(201);
    expect(response.body.domain).toBe(name);
    expect(response.body.account_id).toBe(session.accountId);
    expect(response.body.dns_valid).toBe(false);
    expect(response.text).not.toMatch(/PRIVATE KEY/);
    const hosts = response.body.dns_records.map((record) => `${record.type} ${record.host}`);
    expect(hosts).toEqual(
      expect.arrayContaining([
        `TXT ${name}`,
        expect.stringMatching(new RegExp(`^TXT [a-z0-9-]+\\._domainkey\\.${name}$`)) as string,
        `TXT _dmarc.${name}`,
        `MX ${name}`,
      ]),
    );
    for (const record of response.body.dns_records) expect(record.propagated).toBe(false);
  });

  it('answers 409 for a duplicate, 400 for a bad name, and allows the name in another account', async () => {
    const domain = await createDomain();
    expectError(await session.api.post(session.path('/domains'), { domain: domain.domain }), 409);
    expectError(await session.api.post(session.path('/domains'), { domain: 'not a domain' }), 400);
    expectError(await session.api.post(session.path('/domains'), { domain: 'localhost' }), 400);

    const other = await createAccountSession();
    const theirs = await other.api.post<DomainRecord>(other.path('/domains'), {
      domain: domain.domain,
    });
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(domain.id);
  });

  it('gets, lists with the dns_valid filter, and paginates', async () => {
    const first = await createDomain();
    const second = await createDomain();

    const got = await session.api.get<DomainRecord>(session.path(`/domains/${first.domain}`));
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(first.id);

    const invalid = await session.api.get<{ data: DomainRecord[] }>(
      session.path('/domains?dns_valid=false'),
    );
    expect(invalid.body.data.map((domain) => domain.id)).toEqual(
      expect.arrayContaining([first.id, second.id]),
    );
    const valid = await session.api.get<{ data: DomainRecord[] }>(
      session.path('/domains?dns_valid=true'),
    );
    expect(valid.body.data.map((domain) => domain.id)).not.toContain(first.id);
    expectError(await session.api.get(session.path('/domains?dns_valid=maybe')), 400);

    const page = await session.api.get<{
      data: DomainRecord[];
      pagination: { has_more: boolean; next_cursor?: string };
    }>(session.path('/domains?limit=1'));
    expect(page.body.data).toHaveLength(1);
    expect(page.body.pagination.has_more).toBe(true);
    const next = await session.api.get<{ data: DomainRecord[] }>(
      session.path(`/domains?limit=1&after=${page.body.pagination.next_cursor ?? ''}`),
    );
    expect(next.body.data[0]?.id).not.toBe(page.body.data[0]?.id);
  });

  it('answers 404 for an unknown domain and never shows another account’s domain', async () => {
    expectError(await session.api.get(session.path(`/domains/${uniqueDomain()}`)), 404);

    const other = await createAccountSession();
    const theirs = await other.api.post<DomainRecord>(other.path('/domains'), {
      domain: uniqueDomain(),
    });
    expectError(await session.api.get(session.path(`/domains/${theirs.body.domain}`)), 404);
    expectError(await session.api.delete(session.path(`/domains/${theirs.body.domain}`)), 404);
    expect((await other.api.get(other.path(`/domains/${theirs.body.domain}`))).status).toBe(200);
  });

  it('verifies a domain whose records are published, per record', async () => {
    const domain = await createDomain();
    await publishRecords(domain);

    const checked = await session.api.post<DomainRecord>(
      session.path(`/domains/${domain.domain}/check-dns`),
      undefined,
      { headers: { 'idempotency-key': randomUUID() } },
    );

    expect(checked.status).toBe(200);
    expect(checked.headers['idempotent-replayed']).toBeUndefined();
    expect(checked.body.dns_valid).toBe(true);
    expect(checked.body.last_dns_check_at).not.toBeNull();
    for (const record of checked.body.dns_records) expect(record.propagated).toBe(true);
  });

  it('reports each missing required record and stays invalid', async () => {
    const domain = await createDomain();
    const dkim = domain.dns_records.find((record) => record.host.includes('._domainkey.'));
    await publishRecords(domain, (record) => record !== dkim);

    const checked = await session.api.post<DomainRecord>(
      session.path(`/domains/${domain.domain}/check-dns`),
    );

    expect(checked.status).toBe(200);
    expect(checked.body.dns_valid).toBe(false);
    const propagated = Object.fromEntries(
      checked.body.dns_records.map((record) => [record.host, record.propagated]),
    );
    expect(propagated[dkim?.host ?? '']).toBe(false);
    expect(propagated[`_dmarc.${domain.domain}`]).toBe(true);
  });

  it('updates a subdomain and replays an idempotent create', async () => {
    const name = uniqueDomain();
    const key = randomUUID();
    const created = await session.api.post(
      session.path('/domains'),
      { domain: name },
      { headers: { 'idempotency-key': key } },
    );
    const replayed = await session.api.post(
      session.path('/domains'),
      { domain: name },
      { headers: { 'idempotency-key': key } },
    );
    expect(created.status).toBe(201);
    expect(replayed.status).toBe(201);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.text).toBe(created.text);

    const updated = await session.api.put<DomainRecord>(session.path(`/domains/${name}`), {
      tracking_subdomain: 'links',
    });
    expect(updated.status).toBe(200);
    expect(updated.body.tracking_subdomain).toBe('links');
    expect(updated.body.dns_records.some((record) => record.host === `links.${name}`)).toBe(true);
  });

  it('enforces domains scopes, including delete for one domain only', async () => {
    const mine = await createDomain();
    const another = await createDomain();
    const reader = await createKey(session, ['domains:read']);
    const deleter = await createKey(session, [`domains:delete:{${mine.domain}}`]);

    expect((await reader.client.get(session.path('/domains'))).status).toBe(200);
    expectError(
      await reader.client.post(session.path('/domains'), { domain: uniqueDomain() }),
      403,
    );
    expectError(await reader.client.delete(session.path(`/domains/${mine.domain}`)), 403);

    expectError(await deleter.client.delete(session.path(`/domains/${another.domain}`)), 403);
    const deleted = await deleter.client.delete(session.path(`/domains/${mine.domain}`));
    expect(deleted.status).toBe(200);
    expect(Object.keys(deleted.body as object)).toEqual(['message']);
    expectError(await session.api.get(session.path(`/domains/${mine.domain}`)), 404);
  });
});
