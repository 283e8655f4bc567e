import type { MemberRecord } from '@envoi/contracts-accounts';

import type { MemberEntity } from './member.entity';

export function toMemberRecord(member: MemberEntity): MemberRecord {
  return {
    created_at: member.createdAt.toISOString(),
    updated_at: member.updatedAt.toISOString(),
    user_id: member.userId,
    account_id: member.accountId,
    role: member.role,
  };
}
