import type { EntityManager } from 'typeorm';

import type { AccountEntity } from './account.entity';
import { AccountsException } from './accounts.exception';
import type { AccountsRepository } from './accounts.repository';

/** The account, or `accounts.account_not_found`. Every account-scoped operation starts here. */
export async function requireAccount(
  accounts: AccountsRepository,
  accountId: string,
  manager?: EntityManager,
): Promise<AccountEntity> {
  const account = await accounts.findById(accountId, manager);
  if (!account) throw AccountsException.notFound();
  return account;
}

/** Like requireAccount, for when only existence matters. */
export async function assertAccountExists(
  accounts: AccountsRepository,
  accountId: string,
  manager?: EntityManager,
): Promise<void> {
  if (!(await accounts.exists(accountId, manager))) throw AccountsException.notFound();
}
