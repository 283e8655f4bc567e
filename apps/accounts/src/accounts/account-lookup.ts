import type { EntityManager } from 'typeorm';

import { AccountEntity } from './account.entity';
import { AccountsException } from './accounts.exception';

/** The account, or `accounts.account_not_found`. Every account-scoped operation starts here. */
export async function requireAccount(
  manager: EntityManager,
  accountId: string,
): Promise<AccountEntity> {
  const account = await manager.findOneBy(AccountEntity, { id: accountId });
  if (!account) throw AccountsException.notFound();
  return account;
}

/** Like requireAccount, for when only existence matters. */
export async function assertAccountExists(
  manager: EntityManager,
  accountId: string,
): Promise<void> {
  if (!(await manager.existsBy(AccountEntity, { id: accountId }))) {
    throw AccountsException.notFound();
  }
}
