import { CodedError } from '@envoi/contracts-core';
import { RoutesErrorCode } from '@envoi/contracts-routes';

/** The errors this service raises, with their one wording. */
export const RoutesException = {
  notFound: () => new CodedError(RoutesErrorCode.NotFound, 'route not found'),
  invalidUrl: (reason: string) =>
    new CodedError(RoutesErrorCode.InvalidUrl, `invalid url: ${reason}`),
  invalidRecipient: (recipient: string) =>
    new CodedError(
      RoutesErrorCode.InvalidRecipient,
      `invalid recipient '${recipient}': must be a local part (support), a pattern with one * (ticket-*, *-support) or either with a domain of the account (support@example.com)`,
    ),
  domainNotFound: (domain: string) =>
    new CodedError(RoutesErrorCode.DomainNotFound, `domain '${domain}' not found`),
  scopeNotGranted: () =>
    new CodedError(
      RoutesErrorCode.ScopeNotGranted,
      'insufficient permissions for the required scope',
    ),
} as const;
