import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CodedError, CommonErrorCode } from '@envoi/contracts-core';

/** The SMTP credential errors this service raises, with their one wording (never a secret). */
export const SmtpCredentialsException = {
  notFound: () =>
    new CodedError(AccountsErrorCode.SmtpCredentialNotFound, 'smtp credential not found'),
  domainsRequired: () =>
    new CodedError(
      CommonErrorCode.ValidationFailed,
      'domains must be a non-empty list for a scoped credential',
    ),
  invalidDomain: (domain: string) =>
    new CodedError(
      CommonErrorCode.ValidationFailed,
      `invalid domain '${domain}': must be a fully qualified domain name`,
    ),
  domainNotOwned: (domain: string) =>
    new CodedError(AccountsErrorCode.DomainNotOwned, `domain '${domain}' not found`),
  loginInvalid: () =>
    new CodedError(AccountsErrorCode.SmtpLoginInvalid, 'invalid username or password'),
  loginThrottled: () =>
    new CodedError(AccountsErrorCode.SmtpLoginThrottled, 'too many failed logins, try again later'),
} as const;
