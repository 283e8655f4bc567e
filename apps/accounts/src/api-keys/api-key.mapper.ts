import type {
  ApiKeyRecord,
  ApiKeyScopeRecord,
  CreatedApiKeyRecord,
} from '@envoi/contracts-accounts';

import type { ApiKeyEntity } from './api-key.entity';
import type { ApiKeyScopeEntity } from './api-key-scope.entity';

export function toApiKeyScopeRecord(scope: ApiKeyScopeEntity): ApiKeyScopeRecord {
  return {
    id: scope.id,
    created_at: scope.createdAt.toISOString(),
    updated_at: scope.updatedAt.toISOString(),
    api_key_id: scope.apiKeyId,
    scope: scope.scope,
    domain_id: scope.domainId,
  };
}

/** The public record; `scopes` must be the key's scopes ordered by position. */
export function toApiKeyRecord(
  key: ApiKeyEntity,
  scopes: readonly ApiKeyScopeEntity[],
): ApiKeyRecord {
  return {
    object: 'api_key',
    id: key.id,
    created_at: key.createdAt.toISOString(),
    updated_at: key.updatedAt.toISOString(),
    last_used_at: key.lastUsedAt ? key.lastUsedAt.toISOString() : null,
    account_id: key.accountId,
    label: key.label,
    public_key: key.publicKey,
    scopes: scopes.map(toApiKeyScopeRecord),
    ip_allow_list: [...key.ipAllowList],
  };
}

export function toCreatedApiKeyRecord(
  record: ApiKeyRecord,
  secretKey: string,
): CreatedApiKeyRecord {
  return { ...record, secret_key: secretKey };
}
