import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CodedError } from '@envoi/contracts-core';

export const AccountsException = {
  notFound: () => new CodedError(AccountsErrorCode.AccountNotFound, 'account not found'),
  parentNotFound: () =>
    new CodedError(AccountsErrorCode.AccountNotFound, 'parent account not found'),
} as const;
