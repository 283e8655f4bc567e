import { CodedError } from '@envoi/contracts-core';
import { DomainsErrorCode } from '@envoi/contracts-domains';

/** The domain errors this service raises, with their one wording. */
export const DomainsException = {
  notFound: () => new CodedError(DomainsErrorCode.DomainNotFound, 'domain not found'),
  alreadyExists: () =>
    new CodedError(DomainsErrorCode.DomainAlreadyExists, 'domain already exists'),
  invalidName: (raw: string) =>
    new CodedError(DomainsErrorCode.InvalidDomainName, `invalid FQDN: ${raw.slice(0, 300)}`),
  invalidSubdomain: (message: string) => new CodedError(DomainsErrorCode.InvalidSubdomain, message),
  subdomainLocked: (field: string) =>
    new CodedError(
      DomainsErrorCode.SubdomainLocked,
      `${field} is locked: its DNS record has been verified`,
    ),
  invalidSelector: () =>
    new CodedError(
      DomainsErrorCode.InvalidDkimSelector,
      'dkim_selector must be one DNS label of 1-62 characters from a-z, 0-9 and "-", without a hyphen at either end',
    ),
  selectorLocked: () =>
    new CodedError(
      DomainsErrorCode.DkimSelectorLocked,
      'dkim_selector is locked: DKIM has been verified with the current selector',
    ),
  invalidPrivateKey: (message: string) =>
    new CodedError(DomainsErrorCode.InvalidDkimPrivateKey, message),
  dnsCheckUnavailable: () =>
    new CodedError(
      DomainsErrorCode.DnsCheckUnavailable,
      'DNS check is currently unavailable, try again later',
    ),
} as const;
