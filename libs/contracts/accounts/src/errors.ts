export enum AccountsErrorCode {
  AccountNotFound = 'accounts.account_not_found',
  AccountSuspended = 'accounts.account_suspended',
  MemberNotFound = 'accounts.member_not_found',
  MemberAlreadyExists = 'accounts.member_already_exists',
  OwnerCannotBeRemoved = 'accounts.owner_cannot_be_removed',
  ApiKeyNotFound = 'accounts.api_key_not_found',
  InvalidApiKey = 'accounts.invalid_api_key',
  InvalidScope = 'accounts.invalid_scope',
  /** A domain scope names a domain the account does not own (or no longer owns). */
  DomainNotOwned = 'accounts.domain_not_owned',
  InvalidIpAllowList = 'accounts.invalid_ip_allow_list',
  NothingToUpdate = 'accounts.nothing_to_update',
  SelfLockout = 'accounts.self_lockout',
  SubAccountNotFound = 'accounts.sub_account_not_found',
  /** Only a top-level account has sub-accounts. */
  NotAParentAccount = 'accounts.not_a_parent_account',
  SmtpCredentialNotFound = 'accounts.smtp_credential_not_found',
  /** Wrong password, unknown username or deleted credential: deliberately indistinguishable. */
  SmtpLoginInvalid = 'accounts.smtp_login_invalid',
  /** Too many failed logins from this address or for this username: try again later. */
  SmtpLoginThrottled = 'accounts.smtp_login_throttled',
}
