import type { Page, PageRequest } from '@envoi/contracts-core';
import { keysetPage } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type DeepPartial, type EntityManager, In } from 'typeorm';

import { DomainEntity } from './domain.entity';

/**
 * Claims up to `limit` domains whose periodic check is due, oldest first, by moving their due
 * time past a lease: other replicas skip rows locked by the claim (SKIP LOCKED) and see them as
 * not due once it commits. The check sets the next due time; if this replica dies first, the
 * lease expires and another one checks the domain.
 */
const CLAIM_DUE_SQL = `
  WITH claimed AS (
    UPDATE domains.domains AS d
    SET next_check_at = now() + make_interval(secs => $2::double precision / 1000)
    WHERE d.id IN (
      SELECT id FROM domains.domains
      WHERE next_check_at <= now()
      ORDER BY next_check_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING d.id
  )
  SELECT id FROM claimed`;

/** The statements on domains.domains. */
@Injectable()
export class DomainsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** A domain not stored yet. */
  create(fields: DeepPartial<DomainEntity>): DomainEntity {
    return this.dataSource.manager.create(DomainEntity, fields);
  }

  /** The account's domains, valid or invalid ones only when `dnsValid` is given. */
  page(
    accountId: string,
    dnsValid: boolean | undefined,
    page: PageRequest,
  ): Promise<Page<DomainEntity>> {
    const query = this.dataSource.manager
      .createQueryBuilder(DomainEntity, 'domain')
      .where('domain.accountId = :accountId', { accountId });
    if (dnsValid !== undefined) query.andWhere('domain.dnsValid = :dnsValid', { dnsValid });
    return keysetPage(query, 'domain', page);
  }

  existsByName(accountId: string, name: string): Promise<boolean> {
    return this.dataSource.manager.existsBy(DomainEntity, { accountId, name });
  }

  /** Fails with a unique violation (domains_account_id_name_key) for a name the account has. */
  async insert(domain: DomainEntity): Promise<void> {
    await this.dataSource.manager.insert(DomainEntity, domain);
  }

  findByName(
    accountId: string,
    name: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<DomainEntity | null> {
    return manager.findOneBy(DomainEntity, { accountId, name });
  }

  /** Like findByName, holding the row locked until the transaction ends. */
  lockByName(
    accountId: string,
    name: string,
    manager: EntityManager,
  ): Promise<DomainEntity | null> {
    return manager.findOne(DomainEntity, {
      where: { accountId, name },
      lock: { mode: 'pessimistic_write' },
    });
  }

  findById(
    id: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<DomainEntity | null> {
    return manager.findOneBy(DomainEntity, { id });
  }

  /** Like findById, holding the row locked until the transaction ends. */
  lockById(id: string, manager: EntityManager): Promise<DomainEntity | null> {
    return manager.findOne(DomainEntity, { where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  findByIds(ids: readonly string[]): Promise<DomainEntity[]> {
    return this.dataSource.manager.findBy(DomainEntity, { id: In([...ids]) });
  }

  /** Domains of any account with one of these names. */
  findByNames(names: readonly string[]): Promise<DomainEntity[]> {
    if (names.length === 0) return Promise.resolve([]);
    return this.dataSource.manager.findBy(DomainEntity, { name: In([...names]) });
  }

  /** The number of domains of each account that has any. */
  async countByAccount(accountIds: readonly string[]): Promise<Map<string, number>> {
    if (accountIds.length === 0) return new Map();
    const rows: Array<{ account_id: string; count: number }> = await this.dataSource.query(
      `SELECT account_id, count(*)::int AS count FROM domains.domains
       WHERE account_id = ANY($1::uuid[]) GROUP BY account_id`,
      [accountIds],
    );
    return new Map(rows.map((row) => [row.account_id, row.count]));
  }

  /** The ids of the account's domains among `names`. */
  idsByName(
    accountId: string,
    names: readonly string[],
  ): Promise<Array<Pick<DomainEntity, 'id' | 'name'>>> {
    if (names.length === 0) return Promise.resolve([]);
    return this.dataSource.manager.find(DomainEntity, {
      select: { id: true, name: true },
      where: { accountId, name: In([...names]) },
    });
  }

  /** Every account's domain of that name: DNS-valid ones first, then the oldest (domains_name_idx). */
  ownersByName(name: string): Promise<Array<Pick<DomainEntity, 'id' | 'accountId' | 'dnsValid'>>> {
    return this.dataSource.manager.find(DomainEntity, {
      select: { id: true, accountId: true, dnsValid: true },
      where: { name },
      order: { dnsValid: 'DESC', createdAt: 'ASC' },
    });
  }

  /** Stores the settings a user changes (subdomains, selector, rotation) and the version. */
  async updateSettings(domain: DomainEntity, manager: EntityManager): Promise<void> {
    await manager.update(
      DomainEntity,
      { id: domain.id },
      {
        trackingSubdomain: domain.trackingSubdomain,
        returnPathSubdomain: domain.returnPathSubdomain,
        subscriptionSubdomain: domain.subscriptionSubdomain,
        mediaSubdomain: domain.mediaSubdomain,
        dkimSelector: domain.dkimSelector,
        dkimRotationIntervalDays: domain.dkimRotationIntervalDays,
        version: domain.version,
        updatedAt: () => 'now()',
      },
    );
  }

  /**
   * Stores what a DNS check found (results, validity, locks, schedule) and the version;
   * `updated_at` moves only when the sender authorization changed.
   */
  async updateCheck(
    domain: DomainEntity,
    authorizationChanged: boolean,
    manager: EntityManager,
  ): Promise<void> {
    await manager.update(
      DomainEntity,
      { id: domain.id },
      {
        dnsChecks: domain.dnsChecks,
        dnsValid: domain.dnsValid,
        lastDnsCheckAt: domain.lastDnsCheckAt,
        nextCheckAt: domain.nextCheckAt,
        trackingLocked: domain.trackingLocked,
        returnPathLocked: domain.returnPathLocked,
        subscriptionLocked: domain.subscriptionLocked,
        mediaLocked: domain.mediaLocked,
        dkimSelectorLocked: domain.dkimSelectorLocked,
        version: domain.version,
        updatedAt: authorizationChanged ? () => 'now()' : () => 'updated_at',
      },
    );
  }

  /** Moves the next periodic check, leaving `updated_at` as it is. */
  async reschedule(id: string, nextCheckAt: Date): Promise<void> {
    await this.dataSource.manager.update(
      DomainEntity,
      { id },
      { nextCheckAt, updatedAt: () => 'updated_at' },
    );
  }

  async delete(id: string, manager: EntityManager): Promise<void> {
    await manager.delete(DomainEntity, { id });
  }

  /** Claims up to `limit` domains whose periodic check is due for `leaseMs`; returns their ids. */
  async claimDue(limit: number, leaseMs: number): Promise<string[]> {
    const rows = await this.dataSource.query<Array<{ id: string }>>(CLAIM_DUE_SQL, [
      limit,
      leaseMs,
    ]);
    return rows.map((row) => row.id);
  }
}
