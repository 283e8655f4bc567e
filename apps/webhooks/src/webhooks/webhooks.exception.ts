import { CodedError } from '@envoi/contracts-core';
import { WebhooksErrorCode } from '@envoi/contracts-webhooks';

/** The errors this service raises, with their one wording. */
export const WebhooksException = {
  notFound: () => new CodedError(WebhooksErrorCode.NotFound, 'webhook not found'),
  invalidUrl: (reason: string) =>
    new CodedError(WebhooksErrorCode.InvalidUrl, `invalid url: ${reason}`),
  domainsRequired: () =>
    new CodedError(
      WebhooksErrorCode.InvalidDomains,
      'domains must be a non-empty list for a scoped webhook',
    ),
  invalidDomain: (domain: string) =>
    new CodedError(
      WebhooksErrorCode.InvalidDomains,
      `invalid domain '${domain}': must be a fully qualified domain name`,
    ),
  domainNotFound: (domain: string) =>
    new CodedError(WebhooksErrorCode.DomainNotFound, `domain '${domain}' not found`),
  scopeNotGranted: () =>
    new CodedError(
      WebhooksErrorCode.ScopeNotGranted,
      'insufficient permissions for the required scope',
    ),
} as const;
