export enum SuppressionsErrorCode {
  /** No (unexpired) suppression matched the email, and domain when one was given. */
  NotFound = 'suppressions.not_found',
  /** An unexpired suppression of that email for that domain (or for every domain) exists. */
  AlreadyExists = 'suppressions.already_exists',
  /** Not an email address (after trimming and lowercasing). */
  InvalidEmail = 'suppressions.invalid_email',
  /** A domain that is not a hostname (after normalisation). */
  InvalidDomain = 'suppressions.invalid_domain',
  /** An `expires_at` that is not in the future. */
  InvalidExpiry = 'suppressions.invalid_expires_at',
  /** A `from_time` later than `to_time`. */
  InvalidTimeRange = 'suppressions.invalid_time_range',
  /** A `domain` filter (list, wipe) naming no domain of the account. */
  DomainNotFound = 'suppressions.domain_not_found',
}
