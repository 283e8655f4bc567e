import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CodedError } from '@envoi/contracts-core';

/** The sub-account errors this service raises, with their one wording. */
export const SubAccountsException = {
  notFound: () => new CodedError(AccountsErrorCode.SubAccountNotFound, 'sub account not found'),
  notAParent: () =>
    new CodedError(
      AccountsErrorCode.NotAParentAccount,
      'a sub account cannot have sub accounts of its own',
    ),
  parentNotActive: () => new CodedError(AccountsErrorCode.AccountSuspended, 'Account is suspended'),
  nothingToUpdate: () =>
    new CodedError(
      AccountsErrorCode.NothingToUpdate,
      'at least one of name, website and monthly_credit must be provided and differ from the current value',
    ),
} as const;
