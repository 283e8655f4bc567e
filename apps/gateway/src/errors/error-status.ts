import { AccountsErrorCode } from '@envoi/contracts-accounts';
import { CommonErrorCode } from '@envoi/contracts-core';
import { DomainsErrorCode } from '@envoi/contracts-domains';
import { MessagesErrorCode } from '@envoi/contracts-messages';
import { RoutesErrorCode } from '@envoi/contracts-routes';
import { SuppressionsErrorCode } from '@envoi/contracts-suppressions';
import { WebhooksErrorCode } from '@envoi/contracts-webhooks';

/** Every error code any service can raise. Adding a code without a status fails to compile. */
export type ServiceErrorCode =
  | CommonErrorCode
  | AccountsErrorCode
  | DomainsErrorCode
  | MessagesErrorCode
  | SuppressionsErrorCode
  | WebhooksErrorCode
  | RoutesErrorCode;

const STATUS_BY_CODE: { readonly [Code in ServiceErrorCode]: number } = {
  [CommonErrorCode.ValidationFailed]: 400,
  [CommonErrorCode.NotFound]: 404,
  [CommonErrorCode.Unavailable]: 503,
  [CommonErrorCode.Internal]: 500,

  [AccountsErrorCode.AccountNotFound]: 404,
  [AccountsErrorCode.AccountSuspended]: 401,
  [AccountsErrorCode.MemberNotFound]: 404,
  [AccountsErrorCode.MemberAlreadyExists]: 409,
  [AccountsErrorCode.OwnerCannotBeRemoved]: 400,
  [AccountsErrorCode.ApiKeyNotFound]: 404,
  [AccountsErrorCode.InvalidApiKey]: 401,
  [AccountsErrorCode.InvalidScope]: 400,
  [AccountsErrorCode.InvalidIpAllowList]: 400,
  [AccountsErrorCode.NothingToUpdate]: 400,
  [AccountsErrorCode.SelfLockout]: 409,
  [AccountsErrorCode.DomainNotOwned]: 400,
  [AccountsErrorCode.SubAccountNotFound]: 404,
  [AccountsErrorCode.NotAParentAccount]: 403,
  [AccountsErrorCode.SmtpCredentialNotFound]: 404,
  // Raised only towards the smtp edge; an HTTP caller never sees these.
  [AccountsErrorCode.SmtpLoginInvalid]: 401,
  [AccountsErrorCode.SmtpLoginThrottled]: 429,

  [DomainsErrorCode.DomainNotFound]: 404,
  [DomainsErrorCode.DomainAlreadyExists]: 409,
  [DomainsErrorCode.InvalidDomainName]: 400,
  [DomainsErrorCode.InvalidSubdomain]: 400,
  [DomainsErrorCode.SubdomainLocked]: 400,
  [DomainsErrorCode.InvalidDkimSelector]: 400,
  [DomainsErrorCode.DkimSelectorLocked]: 400,
  [DomainsErrorCode.InvalidDkimPrivateKey]: 400,
  [DomainsErrorCode.DnsCheckUnavailable]: 503,

  [SuppressionsErrorCode.NotFound]: 404,
  [SuppressionsErrorCode.AlreadyExists]: 409,
  [SuppressionsErrorCode.InvalidEmail]: 400,
  [SuppressionsErrorCode.InvalidDomain]: 400,
  [SuppressionsErrorCode.InvalidExpiry]: 400,
  [SuppressionsErrorCode.InvalidTimeRange]: 400,
  [SuppressionsErrorCode.DomainNotFound]: 404,

  [MessagesErrorCode.InvalidMessage]: 400,
  [MessagesErrorCode.SenderDomainNotOwned]: 400,
  [MessagesErrorCode.SenderDomainNotVerified]: 400,
  [MessagesErrorCode.TemplateError]: 400,
  [MessagesErrorCode.MessageNotFound]: 404,
  [MessagesErrorCode.MessageNotCancellable]: 400,
  [MessagesErrorCode.UploadUnavailable]: 503,
  [MessagesErrorCode.IdempotencyKeyReused]: 422,
  [MessagesErrorCode.TrackingNotFound]: 404,
  // Raised only towards the smtp edge, which maps them to SMTP replies.
  [MessagesErrorCode.SubmissionMalformed]: 400,
  [MessagesErrorCode.SubmissionControlHeaderInvalid]: 400,
  [MessagesErrorCode.SubmissionSenderNotAllowed]: 403,
  [MessagesErrorCode.SubmissionAccountDisabled]: 403,

  [WebhooksErrorCode.NotFound]: 404,
  [WebhooksErrorCode.InvalidUrl]: 400,
  [WebhooksErrorCode.InvalidDomains]: 400,
  [WebhooksErrorCode.DomainNotFound]: 400,
  [WebhooksErrorCode.ScopeNotGranted]: 403,
  [WebhooksErrorCode.StreamListenerAttached]: 409,
  [WebhooksErrorCode.StreamNotAttached]: 409,

  [RoutesErrorCode.NotFound]: 404,
  [RoutesErrorCode.InvalidUrl]: 400,
  [RoutesErrorCode.InvalidRecipient]: 400,
  [RoutesErrorCode.DomainNotFound]: 400,
  [RoutesErrorCode.ScopeNotGranted]: 403,
  [RoutesErrorCode.StreamListenerAttached]: 409,
  [RoutesErrorCode.StreamNotAttached]: 409,
  [RoutesErrorCode.StreamTargetInvalid]: 400,
};

/** The HTTP status of a service error code; unknown codes are internal errors. */
export function statusForCode(code: string): number {
  return Object.prototype.hasOwnProperty.call(STATUS_BY_CODE, code)
    ? STATUS_BY_CODE[code as ServiceErrorCode]
    : 500;
}
