import type { AccountStatus } from '@envoi/contracts-accounts';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { AccountEntity } from '../accounts/account.entity';
import { accountStatusSql } from '../accounts/account-status';

export interface AccountStatusRow {
  account_id: string;
  status: AccountStatus;
}

/** An account's derived status, with its parent row joined (see account-status.ts). */
const STATUS_SELECT = `SELECT a.id AS account_id, ${accountStatusSql('a', 'p')} AS status
  FROM accounts.accounts a LEFT JOIN accounts.accounts p ON p.id = a.parent_account_id`;

/** The statements of operator suspensions and of status lookups. */
@Injectable()
export class SuspensionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Locks the account until the transaction ends; false when it does not exist. */
  async lock(accountId: string, manager: EntityManager): Promise<boolean> {
    const account = await manager.findOne(AccountEntity, {
      where: { id: accountId },
      lock: { mode: 'pessimistic_write' },
    });
    return account !== null;
  }

  /** Suspends the account with the reason (stamped with the database clock), or lifts it (null). */
  async setSuspension(
    accountId: string,
    reason: string | null,
    manager: EntityManager,
  ): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(AccountEntity)
      .set({
        suspendedAt: reason === null ? null : () => 'now()',
        suspensionReason: reason,
        updatedAt: () => 'now()',
      })
      .where('id = :id', { id: accountId })
      .execute();
  }

  /** The account's status, then those of its children (deleted ones included), oldest first. */
  family(accountId: string, manager: EntityManager): Promise<AccountStatusRow[]> {
    return manager.query(
      `${STATUS_SELECT} WHERE a.id = $1 OR a.parent_account_id = $1
       ORDER BY (a.id = $1) DESC, a.seq`,
      [accountId],
    );
  }

  /** The statuses of the accounts that exist among these. */
  statuses(accountIds: readonly string[]): Promise<AccountStatusRow[]> {
    if (accountIds.length === 0) return Promise.resolve([]);
    return this.dataSource.query(`${STATUS_SELECT} WHERE a.id = ANY($1::uuid[])`, [accountIds]);
  }
}
