import { CodedError } from '@envoi/contracts-core';
import { SuppressionsErrorCode } from '@envoi/contracts-suppressions';

/** The errors this service raises, with their one wording. */
export const SuppressionsException = {
  notFound: () => new CodedError(SuppressionsErrorCode.NotFound, 'suppression not found'),
  alreadyExists: () =>
    new CodedError(SuppressionsErrorCode.AlreadyExists, 'suppression already exists'),
  invalidEmail: (field: string) =>
    new CodedError(SuppressionsErrorCode.InvalidEmail, `${field} must be a valid email address`),
  invalidDomain: (field: string) =>
    new CodedError(
      SuppressionsErrorCode.InvalidDomain,
      `${field} must be a fully qualified domain name`,
    ),
  expiryNotInFuture: () =>
    new CodedError(SuppressionsErrorCode.InvalidExpiry, 'expires_at must be in the future'),
  domainNotFound: () => new CodedError(SuppressionsErrorCode.DomainNotFound, 'domain not found'),
  invalidTimeRange: () =>
    new CodedError(
      SuppressionsErrorCode.InvalidTimeRange,
      'from_time must not be later than to_time',
    ),
} as const;
