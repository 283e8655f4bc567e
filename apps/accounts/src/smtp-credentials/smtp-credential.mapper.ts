import type { CreatedSmtpCredentialRecord, SmtpCredentialRecord } from '@envoi/contracts-accounts';

import type { StoredSmtpCredential } from './smtp-credentials.repository';

export function toSmtpCredentialRecord({
  credential,
  domains,
}: StoredSmtpCredential): SmtpCredentialRecord {
  return {
    object: 'credential_smtp',
    id: credential.id,
    created_at: credential.createdAt.toISOString(),
    updated_at: credential.updatedAt.toISOString(),
    name: credential.name,
    username: credential.username,
    sandbox: credential.sandbox,
    scope: credential.scope,
    domains,
  };
}

export function toCreatedSmtpCredentialRecord(
  stored: StoredSmtpCredential,
  password: string,
): CreatedSmtpCredentialRecord {
  return { ...toSmtpCredentialRecord(stored), password };
}
