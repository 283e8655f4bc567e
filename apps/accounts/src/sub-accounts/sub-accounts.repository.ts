import type { Page, PageRequest } from '@envoi/contracts-core';
import { keysetPage } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, IsNull } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';

import { AccountEntity } from '../accounts/account.entity';

/** The statements on the children of an account (accounts.accounts rows with a parent). */
@Injectable()
export class SubAccountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The parent's children that are not deleted, newest first. */
  page(parentId: string, page: PageRequest): Promise<Page<AccountEntity>> {
    return keysetPage(
      this.dataSource.manager
        .createQueryBuilder(AccountEntity, 'account')
        .where('account.parentAccountId = :parentId', { parentId })
        .andWhere('account.deletedAt IS NULL'),
      'account',
      page,
    );
  }

  /** The child of this parent, deleted or not. */
  findChild(
    parentId: string,
    childId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<AccountEntity | null> {
    return manager.findOneBy(AccountEntity, { id: childId, parentAccountId: parentId });
  }

  /** The child of this parent unless deleted, locked until the transaction ends. */
  lockLiveChild(
    parentId: string,
    childId: string,
    manager: EntityManager,
  ): Promise<AccountEntity | null> {
    return manager.findOne(AccountEntity, {
      where: { id: childId, parentAccountId: parentId, deletedAt: IsNull() },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** The parent, held against a concurrent change of its status until the transaction ends. */
  holdParent(parentId: string, manager: EntityManager): Promise<AccountEntity | null> {
    return manager.findOne(AccountEntity, {
      where: { id: parentId },
      lock: { mode: 'pessimistic_read' },
    });
  }

  /** Sets the fields given (and `updated_at`); `() => 'now()'` stamps the database clock. */
  async updateChild(
    childId: string,
    changes: QueryDeepPartialEntity<AccountEntity>,
    manager: EntityManager,
  ): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(AccountEntity)
      .set({ ...changes, updatedAt: () => 'now()' })
      .where('id = :id', { id: childId })
      .execute();
  }

  /** The number of member rows of each account that has any. */
  async memberCounts(accountIds: readonly string[]): Promise<Map<string, number>> {
    if (accountIds.length === 0) return new Map();
    const rows: Array<{ account_id: string; members: number }> = await this.dataSource.query(
      `SELECT account_id, count(*)::int AS members FROM accounts.members
       WHERE account_id = ANY($1::uuid[]) GROUP BY account_id`,
      [accountIds],
    );
    return new Map(rows.map((row) => [row.account_id, row.members]));
  }
}
