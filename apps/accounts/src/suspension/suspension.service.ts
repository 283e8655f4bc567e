import type { AccountStatusesRecord, AccountStatusRecord } from '@envoi/contracts-accounts';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { AccountsException } from '../accounts/accounts.exception';
import { SubAccountEvents } from '../sub-accounts/sub-account-events';
import { type AccountStatusRow, SuspensionRepository } from './suspension.repository';

/**
 * Operators' suspensions (admin CLI) of any account. Only the account's own columns change: a
 * parent's suspension shows on each child as `parent-suspended`, and lifting it gives each child
 * back the status its own columns say (see account-status.ts). Every replica of every service
 * hears of the account and its children after the commit.
 */
@Injectable()
export class SuspensionService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: SuspensionRepository,
    private readonly events: SubAccountEvents,
  ) {}

  /** Suspends the account (again, with the new reason, when it already was). */
  suspend(accountId: string, reason: string): Promise<AccountStatusRecord> {
    return this.change(accountId, reason);
  }

  unsuspend(accountId: string): Promise<AccountStatusRecord> {
    return this.change(accountId, null);
  }

  async statuses(accountIds: readonly string[]): Promise<AccountStatusesRecord> {
    const rows = await this.repository.statuses([...new Set(accountIds)]);
    return { statuses: rows.map(({ account_id, status }) => ({ account_id, status })) };
  }

  private async change(accountId: string, reason: string | null): Promise<AccountStatusRecord> {
    const family = await this.dataSource.transaction(async (manager) => {
      if (!(await this.repository.lock(accountId, manager))) throw AccountsException.notFound();
      await this.repository.setSuspension(accountId, reason, manager);
      return this.repository.family(accountId, manager);
    });
    this.events.statusChanged(family.map((row) => row.account_id));
    return toStatusRecord(family);
  }
}

/** The account's row first, then its children's. */
export function toStatusRecord([account, ...children]: AccountStatusRow[]): AccountStatusRecord {
  if (!account) throw AccountsException.notFound();
  return {
    account_id: account.account_id,
    status: account.status,
    sub_accounts: children.map(({ account_id, status }) => ({ account_id, status })),
  };
}
