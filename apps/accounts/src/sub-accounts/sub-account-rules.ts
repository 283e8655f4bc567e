import type { UpdateSubAccountBody } from '@envoi/contracts-accounts';
import { normalizeDomainName } from '@envoi/contracts-core';

import type { AccountEntity } from '../accounts/account.entity';
import { accountStatus } from '../accounts/account-status';
import { SubAccountsException } from './sub-accounts.exception';

export type SubAccountChanges = Partial<Pick<AccountEntity, 'name' | 'website' | 'monthlyCredit'>>;

/** Only an active top-level account may create sub-accounts. */
export function assertMayCreateSubAccount(parent: AccountEntity): void {
  if (parent.parentAccountId !== null) throw SubAccountsException.notAParent();
  const status = accountStatus({
    deletedAt: parent.deletedAt,
    suspendedAt: parent.suspendedAt,
    parentSuspendedAt: null,
  });
  if (status !== 'active') throw SubAccountsException.parentNotActive();
}

/** A website as stored: lowercase, without a trailing dot. */
export function storedWebsite(website: string): string {
  return normalizeDomainName(website);
}

/**
 * The fields the update changes: given (not null or omitted) and different from the current
 * value. Fails when there is none.
 */
export function subAccountChanges(
  current: Pick<AccountEntity, 'name' | 'website' | 'monthlyCredit'>,
  body: UpdateSubAccountBody,
): SubAccountChanges {
  const changes: SubAccountChanges = {};
  if (body.name != null && body.name !== current.name) changes.name = body.name;
  if (body.website != null) {
    const website = storedWebsite(body.website);
    if (website !== current.website) changes.website = website;
  }
  if (body.monthly_credit != null && body.monthly_credit !== current.monthlyCredit) {
    changes.monthlyCredit = body.monthly_credit;
  }
  if (Object.keys(changes).length === 0) throw SubAccountsException.nothingToUpdate();
  return changes;
}
