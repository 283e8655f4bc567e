import type { Page, PageRequest } from '@envoi/contracts-core';
import { keysetPage } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';

import { RouteEntity } from './route.entity';

/** The fields of a new route the caller chooses; counters and times default. */
export type NewRoute = Pick<
  RouteEntity,
  | 'id'
  | 'accountId'
  | 'name'
  | 'url'
  | 'recipient'
  | 'domainId'
  | 'domainName'
  | 'enabled'
  | 'attachments'
  | 'headers'
  | 'groupByMessageId'
  | 'stripReplies'
  | 'secretCiphertext'
> &
  Partial<Pick<RouteEntity, 'temporary' | 'streamed' | 'streamUsedAt'>>;

export type RouteChanges = Partial<
  Omit<
    NewRoute,
    'id' | 'accountId' | 'secretCiphertext' | 'temporary' | 'streamed' | 'streamUsedAt'
  >
>;

/** What matching an address needs of an enabled route. */
export type MatchableRoute = Pick<RouteEntity, 'id' | 'accountId' | 'recipient' | 'domainName'>;

/** `domains` given: only routes whose pattern names one of them (what a domain-scoped key sees). */
function restrictToDomains(
  query: SelectQueryBuilder<RouteEntity>,
  domains: readonly string[] | undefined,
): void {
  if (domains === undefined) return;
  query.andWhere('route.domainName = ANY(:restriction)', { restriction: [...domains] });
}

/** The statements on routes.routes. */
@Injectable()
export class RoutesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The account's routes, newest first; `domain`: only those whose pattern names it. Temporary
   * stream routes are never listed.
   */
  page(
    accountId: string,
    domain: string | undefined,
    restriction: readonly string[] | undefined,
    page: PageRequest,
  ): Promise<Page<RouteEntity>> {
    const query = this.dataSource.manager
      .createQueryBuilder(RouteEntity, 'route')
      .where('route.accountId = :accountId', { accountId })
      .andWhere('NOT route.temporary');
    if (domain !== undefined) query.andWhere('route.domainName = :domain', { domain });
    restrictToDomains(query, restriction);
    return keysetPage(query, 'route', page);
  }

  /** The account's route, if the restriction lets it be seen; locked when `lock` (in a transaction). */
  find(
    accountId: string,
    routeId: string,
    restriction: readonly string[] | undefined,
    manager: EntityManager = this.dataSource.manager,
    lock = false,
  ): Promise<RouteEntity | null> {
    const query = manager
      .createQueryBuilder(RouteEntity, 'route')
      .where('route.id = :routeId AND route.accountId = :accountId', { routeId, accountId });
    restrictToDomains(query, restriction);
    if (lock) query.setLock('pessimistic_write');
    return query.getOne();
  }

  async insert(fields: NewRoute): Promise<RouteEntity> {
    await this.dataSource.manager.insert(RouteEntity, fields);
    return this.dataSource.manager.findOneByOrFail(RouteEntity, { id: fields.id });
  }

  /**
   * Applies `decide` to the locked route and stores the changes it answers, in one transaction;
   * null when the restriction sees no such route.
   */
  update(
    accountId: string,
    routeId: string,
    restriction: readonly string[] | undefined,
    decide: (current: RouteEntity) => Promise<RouteChanges>,
  ): Promise<RouteEntity | null> {
    return this.dataSource.transaction(async (manager) => {
      const current = await this.find(accountId, routeId, restriction, manager, true);
      if (!current) return null;
      const changes = await decide(current);
      await manager.update(RouteEntity, { id: routeId }, { ...changes, updatedAt: new Date() });
      return manager.findOneByOrFail(RouteEntity, { id: routeId });
    });
  }

  /** Deletes the route and answers it as it was; null when there is none the restriction sees. */
  delete(
    accountId: string,
    routeId: string,
    restriction: readonly string[] | undefined,
  ): Promise<RouteEntity | null> {
    return this.dataSource.transaction(async (manager) => {
      const found = await this.find(accountId, routeId, restriction, manager, true);
      if (!found) return null;
      await manager.delete(RouteEntity, { id: routeId });
      return found;
    });
  }

  /** Deletes the account's routes whose pattern names the domain; answers how many went. */
  async deleteForDomain(accountId: string, domainId: string): Promise<number> {
    const result = await this.dataSource.manager.delete(RouteEntity, { accountId, domainId });
    return result.affected ?? 0;
  }

  /**
   * The enabled routes that may take mail for `domain`: those of the owning accounts whose
   * pattern names it or no domain at all (one statement on routes_account_id_domain_name_idx).
   */
  findMatchable(accountIds: readonly string[], domain: string): Promise<MatchableRoute[]> {
    if (accountIds.length === 0) return Promise.resolve([]);
    return this.dataSource.manager
      .createQueryBuilder(RouteEntity, 'route')
      .select(['route.id', 'route.accountId', 'route.recipient', 'route.domainName'])
      .where('route.accountId = ANY(:accountIds)', { accountIds: [...accountIds] })
      .andWhere('(route.domainName = :domain OR route.domainName IS NULL)', { domain })
      .andWhere('route.enabled')
      .orderBy('route.seq', 'ASC')
      .getMany();
  }
}
