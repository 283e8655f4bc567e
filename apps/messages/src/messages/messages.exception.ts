import { CodedError } from '@envoi/contracts-core';
import { MessagesErrorCode } from '@envoi/contracts-messages';

/** The message errors this service raises, with their one wording. */
export const MessagesException = {
  invalid: (message: string) => new CodedError(MessagesErrorCode.InvalidMessage, message),
  template: (message: string) => new CodedError(MessagesErrorCode.TemplateError, message),
  senderNotOwned: (domain: string) =>
    new CodedError(
      MessagesErrorCode.SenderDomainNotOwned,
      `sender domain ${domain} is not a domain of this account`,
    ),
  senderNotVerified: (domain: string) =>
    new CodedError(
      MessagesErrorCode.SenderDomainNotVerified,
      `sender domain ${domain} does not have valid DNS records`,
    ),
  notFound: () => new CodedError(MessagesErrorCode.MessageNotFound, 'message not found'),
  notCancellable: (status: string) =>
    new CodedError(
      MessagesErrorCode.MessageNotCancellable,
      `only a scheduled message can be cancelled; this one is ${status.toLowerCase()}`,
    ),
  notCancellableAnyMore: () =>
    new CodedError(
      MessagesErrorCode.MessageNotCancellable,
      'the message can no longer be cancelled: its first delivery attempt has started',
    ),
  uploadUnavailable: (message: string) =>
    new CodedError(MessagesErrorCode.UploadUnavailable, message),
  /** The gateway's wording for a key reused with another request (spec 7.5). */
  idempotencyKeyReused: () =>
    new CodedError(
      MessagesErrorCode.IdempotencyKeyReused,
      'idempotency key was already used with a different request payload',
    ),
  submissionMalformed: (reason: string) =>
    new CodedError(MessagesErrorCode.SubmissionMalformed, `malformed message: ${reason}`),
  controlHeaderInvalid: (message: string) =>
    new CodedError(MessagesErrorCode.SubmissionControlHeaderInvalid, message),
  /** The reference's refusal (platform notes 2.10). */
  submissionSenderNotAllowed: (credential: string, accountId: string) =>
    new CodedError(
      MessagesErrorCode.SubmissionSenderNotAllowed,
      `authz_id '${credential}' is not authorized to send as tenant '${accountId}' or from this domain`,
    ),
  submissionAccountDisabled: (reason: string) =>
    new CodedError(MessagesErrorCode.SubmissionAccountDisabled, reason),
} as const;
