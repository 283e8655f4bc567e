import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CodedError } from '@envoi/contracts-core';

/** The API-key errors this service raises, with their one wording. */
export const ApiKeysException = {
  notFound: () => new CodedError(AccountsErrorCode.ApiKeyNotFound, 'api key not found'),
  invalidApiKey: () => new CodedError(AccountsErrorCode.InvalidApiKey, 'invalid API key'),
  invalidScope: (scope: string) =>
    new CodedError(AccountsErrorCode.InvalidScope, `invalid scope: ${scope}`),
  parentOnlyScope: (scope: string) =>
    new CodedError(
      AccountsErrorCode.InvalidScope,
      `scope ${scope} cannot be given to a sub account's API key`,
    ),
  duplicateScope: (scope: string) =>
    new CodedError(AccountsErrorCode.InvalidScope, `duplicate scope: ${scope}`),
  domainNotOwned: (domain: string) =>
    new CodedError(
      AccountsErrorCode.DomainNotOwned,
      `domain ${domain} is not a domain of this account`,
    ),
  invalidIpAllowList: (message: string) =>
    new CodedError(AccountsErrorCode.InvalidIpAllowList, message),
  nothingToUpdate: () =>
    new CodedError(
      AccountsErrorCode.NothingToUpdate,
      'at least one field must be provided and differ from the current value',
    ),
  selfLockout: () =>
    new CodedError(
      AccountsErrorCode.SelfLockout,
      'the new ip_allow_list would exclude your current IP address',
    ),
} as const;
