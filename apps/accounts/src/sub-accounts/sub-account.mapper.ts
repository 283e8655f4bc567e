import type { SubAccountRecord } from '@envoi/contracts-accounts';

import type { AccountEntity } from '../accounts/account.entity';
import { accountStatus } from '../accounts/account-status';

export interface SubAccountCounts {
  domainCount: number;
  memberCount: number;
}

/** The public record of a child, whose status also depends on its parent's suspension. */
export function toSubAccountRecord(
  child: AccountEntity,
  parentSuspendedAt: Date | null,
  counts: SubAccountCounts,
): SubAccountRecord {
  return {
    object: 'sub_account',
    id: child.id,
    parent_account_id: child.parentAccountId ?? '',
    created_at: child.createdAt.toISOString(),
    name: child.name,
    website: child.website ?? '',
    status: accountStatus({
      deletedAt: child.deletedAt,
      suspendedAt: child.suspendedAt,
      parentSuspendedAt,
    }),
    monthly_credit: child.monthlyCredit,
    domain_count: counts.domainCount,
    member_count: counts.memberCount,
    last_activity_at: child.lastActivityAt?.toISOString() ?? null,
  };
}
