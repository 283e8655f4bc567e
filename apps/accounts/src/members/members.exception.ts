import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CodedError } from '@envoi/contracts-core';

export const MembersException = {
  notFound: () => new CodedError(AccountsErrorCode.MemberNotFound, 'member not found'),
  alreadyExists: () =>
    new CodedError(
      AccountsErrorCode.MemberAlreadyExists,
      'user is already a member of this account',
    ),
  ownerCannotBeRemoved: () =>
    new CodedError(AccountsErrorCode.OwnerCannotBeRemoved, 'the account owner cannot be removed'),
} as const;
