import { randomBytes, randomUUID } from 'node:crypto';

import { IsolatedPlatform, pollUntil } from '@envoi/shared-testing';
import { DataSource } from 'typeorm';

import { domainsDataSourceOptions } from '../src/database/data-source-options';
import { runDomainsMigrations } from '../src/database/run-domains-migrations';
import { DomainsRepository } from '../src/domains/domains.repository';

const LEASE_MS = 60_000;

/**
 * The periodic re-check's claim against PostgreSQL, on a database of its own: no domains service
 * runs there, so nothing but these tests claims its domains.
 */
describe('DomainsRepository.claimDue against PostgreSQL', () => {
  let platform: IsolatedPlatform | undefined;
  let dataSource: DataSource | undefined;
  let domains: DomainsRepository;

  beforeAll(async () => {
    platform = await IsolatedPlatform.start({ owner: 'domains_repository' });
    await runDomainsMigrations(platform.databaseUrl);
    dataSource = await new DataSource(
      domainsDataSourceOptions(platform.databaseUrl, 4),
    ).initialize();
    domains = new DomainsRepository(dataSource);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await platform?.stop();
  });

  /** Inserts a domain whose periodic check is due `overdueMs` ago (negative: in the future). */
  async function domainDue(overdueMs: number): Promise<string> {
    const domain = domains.create({
      id: randomUUID(),
      accountId: randomUUID(),
      name: `d-${randomBytes(4).toString('hex')}.example.test`,
      dkimDefaultSelector: 'envoi',
      dkimPublicKey: 'public',
      dkimPrivateKeySealed: Buffer.from('sealed'),
      nextCheckAt: new Date(Date.now() - overdueMs),
    });
    await domains.insert(domain);
    return domain.id;
  }

  async function nextCheckAt(id: string): Promise<Date> {
    const domain = await domains.findById(id);
    if (!domain) throw new Error(`domain ${id} is gone`);
    return domain.nextCheckAt;
  }

  it('claims the due domains oldest first, leasing them, and never one not due', async () => {
    const notDue = await domainDue(-LEASE_MS);
    const newest = await domainDue(1_000);
    const oldest = await domainDue(3_000);
    const middle = await domainDue(2_000);

    await expect(domains.claimDue(2, LEASE_MS)).resolves.toEqual([oldest, middle]);
    await expect(domains.claimDue(10, LEASE_MS)).resolves.toEqual([newest]);
    await expect(domains.claimDue(10, LEASE_MS)).resolves.toEqual([]);
    const leasedUntil = await nextCheckAt(oldest);
    expect(leasedUntil.getTime()).toBeGreaterThan(Date.now() + LEASE_MS / 2);
    expect((await nextCheckAt(notDue)).getTime()).toBeGreaterThan(Date.now());
  });

  it('gives concurrent claims disjoint domains that together are every due one', async () => {
    const due = await Promise.all(
      Array.from({ length: 12 }, (_, index) => domainDue(10_000 + index)),
    );

    const claims = await Promise.all(
      Array.from({ length: 4 }, () => domains.claimDue(5, LEASE_MS)),
    );

    const claimed = claims.flat();
    expect(new Set(claimed).size).toBe(claimed.length);
    expect([...claimed].sort()).toEqual([...due].sort());
  });

  it('claims a domain again once its lease has run out', async () => {
    const id = await domainDue(20_000);
    await expect(domains.claimDue(10, 1)).resolves.toEqual([id]);

    await pollUntil(
      () => domains.claimDue(10, LEASE_MS),
      (claimed) => claimed.includes(id),
      { what: 'the expired lease to be claimed again' },
    );
  });
});
