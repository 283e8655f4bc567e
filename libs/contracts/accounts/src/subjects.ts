import type { MessageResponse, Page, PlainList } from '@envoi/contracts-core';
import { eventSubject, requestSubject } from '@envoi/contracts-core';

import type {
  AccountRecord,
  ApiKeyRecord,
  CreatedApiKeyRecord,
  MemberRecord,
  VerifiedApiKey,
} from './records';
import type {
  AccountRef,
  AddMemberRequest,
  ApiKeyChangedEvent,
  ApiKeyRef,
  ApiKeysUsedEvent,
  CreateAccountRequest,
  CreateApiKeyRequest,
  ListApiKeysRequest,
  RemoveMemberRequest,
  UpdateAccountRequest,
  UpdateApiKeyRequest,
  VerifyApiKeyRequest,
} from './requests';
import type {
  CreatedSmtpCredentialRecord,
  CreateSmtpCredentialRequest,
  ListSmtpCredentialsRequest,
  SmtpCredentialChangedEvent,
  SmtpCredentialRecord,
  SmtpCredentialRef,
  VerifiedSmtpLogin,
  VerifySmtpLoginRequest,
} from './smtp-credentials';
import type {
  AccountSendingRecord,
  AccountStatusChangedEvent,
  AccountStatusesRecord,
  AccountStatusesRequest,
  AccountStatusRecord,
  CreateSubAccountApiKeyRequest,
  CreateSubAccountRequest,
  ListSubAccountApiKeysRequest,
  ListSubAccountsRequest,
  SubAccountApiKeyRef,
  SubAccountRecord,
  SubAccountRef,
  SubAccountsUsageRecord,
  SuspendAccountRequest,
  SuspendSubAccountRequest,
  UpdateSubAccountApiKeyRequest,
  UpdateSubAccountRequest,
} from './sub-accounts';

export interface CreatedAccount {
  account: AccountRecord;
  api_key: CreatedApiKeyRecord;
}

export const AccountsSubjects = {
  createAccount: requestSubject<CreateAccountRequest, CreatedAccount>('accounts.account.create.v1'),
  getAccount: requestSubject<AccountRef, AccountRecord>('accounts.account.get.v1'),
  updateAccount: requestSubject<UpdateAccountRequest, AccountRecord>('accounts.account.update.v1'),

  listMembers: requestSubject<AccountRef, PlainList<MemberRecord>>('accounts.member.list.v1'),
  addMember: requestSubject<AddMemberRequest, MemberRecord>('accounts.member.add.v1'),
  removeMember: requestSubject<RemoveMemberRequest, MessageResponse>('accounts.member.remove.v1'),

  listApiKeys: requestSubject<ListApiKeysRequest, Page<ApiKeyRecord>>('accounts.api-key.list.v1'),
  createApiKey: requestSubject<CreateApiKeyRequest, CreatedApiKeyRecord>(
    'accounts.api-key.create.v1',
  ),
  getApiKey: requestSubject<ApiKeyRef, ApiKeyRecord>('accounts.api-key.get.v1'),
  updateApiKey: requestSubject<UpdateApiKeyRequest, ApiKeyRecord>('accounts.api-key.update.v1'),
  deleteApiKey: requestSubject<ApiKeyRef, MessageResponse>('accounts.api-key.delete.v1'),
  verifyApiKey: requestSubject<VerifyApiKeyRequest, VerifiedApiKey>('accounts.api-key.verify.v1'),

  listSubAccounts: requestSubject<ListSubAccountsRequest, Page<SubAccountRecord>>(
    'accounts.sub-account.list.v1',
  ),
  createSubAccount: requestSubject<CreateSubAccountRequest, SubAccountRecord>(
    'accounts.sub-account.create.v1',
  ),
  getSubAccount: requestSubject<SubAccountRef, SubAccountRecord>('accounts.sub-account.get.v1'),
  updateSubAccount: requestSubject<UpdateSubAccountRequest, SubAccountRecord>(
    'accounts.sub-account.update.v1',
  ),
  deleteSubAccount: requestSubject<SubAccountRef, MessageResponse>(
    'accounts.sub-account.delete.v1',
  ),
  suspendSubAccount: requestSubject<SuspendSubAccountRequest, SubAccountRecord>(
    'accounts.sub-account.suspend.v1',
  ),
  unsuspendSubAccount: requestSubject<SubAccountRef, SubAccountRecord>(
    'accounts.sub-account.unsuspend.v1',
  ),
  getSubAccountsUsage: requestSubject<AccountRef, SubAccountsUsageRecord>(
    'accounts.sub-account.usage.v1',
  ),
  /** Internal (messages service): the account's sending defaults and monthly credit. */
  getSendingSettings: requestSubject<AccountRef, AccountSendingRecord>(
    'accounts.account.sending-settings.v1',
  ),

  listSubAccountApiKeys: requestSubject<ListSubAccountApiKeysRequest, Page<ApiKeyRecord>>(
    'accounts.sub-account-api-key.list.v1',
  ),
  createSubAccountApiKey: requestSubject<CreateSubAccountApiKeyRequest, CreatedApiKeyRecord>(
    'accounts.sub-account-api-key.create.v1',
  ),
  getSubAccountApiKey: requestSubject<SubAccountApiKeyRef, ApiKeyRecord>(
    'accounts.sub-account-api-key.get.v1',
  ),
  updateSubAccountApiKey: requestSubject<UpdateSubAccountApiKeyRequest, ApiKeyRecord>(
    'accounts.sub-account-api-key.update.v1',
  ),
  deleteSubAccountApiKey: requestSubject<SubAccountApiKeyRef, MessageResponse>(
    'accounts.sub-account-api-key.delete.v1',
  ),

  /** Operators (admin CLI): suspend any account; a parent's suspension cascades to its children. */
  suspendAccount: requestSubject<SuspendAccountRequest, AccountStatusRecord>(
    'accounts.account.suspend.v1',
  ),
  unsuspendAccount: requestSubject<AccountRef, AccountStatusRecord>(
    'accounts.account.unsuspend.v1',
  ),
  /** The statuses of many accounts at once (unknown ids left out); delivery asks before sending. */
  accountStatuses: requestSubject<AccountStatusesRequest, AccountStatusesRecord>(
    'accounts.account.statuses.v1',
  ),
  /** Broadcast to every replica of every service (no queue group). */
  accountStatusChanged: eventSubject<AccountStatusChangedEvent>(
    'accounts.account.status-changed.v1',
  ),

  listSmtpCredentials: requestSubject<ListSmtpCredentialsRequest, Page<SmtpCredentialRecord>>(
    'accounts.smtp-credential.list.v1',
  ),
  createSmtpCredential: requestSubject<CreateSmtpCredentialRequest, CreatedSmtpCredentialRecord>(
    'accounts.smtp-credential.create.v1',
  ),
  getSmtpCredential: requestSubject<SmtpCredentialRef, SmtpCredentialRecord>(
    'accounts.smtp-credential.get.v1',
  ),
  deleteSmtpCredential: requestSubject<SmtpCredentialRef, MessageResponse>(
    'accounts.smtp-credential.delete.v1',
  ),
  /**
   * The smtp edge's AUTH check. A wrong password, an unknown username and a deleted credential
   * all answer the same `accounts.smtp_login_invalid` error.
   */
  verifySmtpLogin: requestSubject<VerifySmtpLoginRequest, VerifiedSmtpLogin>(
    'accounts.smtp-credential.verify.v1',
  ),
  /** Broadcast to every smtp replica (no queue group): a credential was created or deleted. */
  smtpCredentialChanged: eventSubject<SmtpCredentialChangedEvent>(
    'accounts.smtp-credential.changed.v1',
  ),

  /** Broadcast to every gateway replica (no queue group): drop cached verifications of the key. */
  apiKeyChanged: eventSubject<ApiKeyChangedEvent>('accounts.api-key.changed.v1'),
  /** Batched last-use times reported by gateways. */
  apiKeysUsed: eventSubject<ApiKeysUsedEvent>('accounts.api-key.used.v1'),
} as const;
