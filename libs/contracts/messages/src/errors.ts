/** Errors the messages service raises; the gateway maps each to an HTTP status. */
export enum MessagesErrorCode {
  /** A rule of spec 4.2 or 2.1 the request breaks (the message names it). */
  InvalidMessage = 'messages.invalid_message',
  /** from.email is not of a domain the account owns (spec 4.2 rule 2). */
  SenderDomainNotOwned = 'messages.sender_domain_not_owned',
  /** from.email's domain is owned but its DNS records are not valid (spec 4.2 rule 2). */
  SenderDomainNotVerified = 'messages.sender_domain_not_verified',
  /** A template that does not parse or render (the message names the field and the problem). */
  TemplateError = 'messages.template_error',
  /** No such message in the account (or not visible to the caller's domain scopes). */
  MessageNotFound = 'messages.message_not_found',
  /** Cancel of a message that is not (or no longer) scheduled. */
  MessageNotCancellable = 'messages.message_not_cancellable',
  /** The uploaded request body the gateway referenced is missing or altered. */
  UploadUnavailable = 'messages.upload_unavailable',
  /** The send's `Idempotency-Key` was committed with another request (spec 7.5: 422). */
  IdempotencyKeyReused = 'messages.idempotency_key_reused',
  /** A tracking token that is not Envoi's, was altered, or whose message or link is gone. */
  TrackingNotFound = 'messages.tracking_not_found',
  /** An SMTP submission that is not a parseable message, or has no usable From header (552). */
  SubmissionMalformed = 'messages.submission_malformed',
  /** A control header (platform notes 3.2) with a value outside its rule (the message names it). */
  SubmissionControlHeaderInvalid = 'messages.submission_control_header_invalid',
  /** The From header is outside the credential's domains or not a verified domain (the 2.10 text). */
  SubmissionSenderNotAllowed = 'messages.submission_sender_not_allowed',
  /** The account cannot send now: not active, or its monthly credit is used up (521). */
  SubmissionAccountDisabled = 'messages.submission_account_disabled',
}
