import { randomUUID } from 'node:crypto';

import type { ApiKeyCaller, ApiKeyIpAllowListChangedEvent } from '@envoi/contracts-accounts';

export interface IpAllowListChange {
  accountId: string;
  keyId: string;
  label: string;
  previous: readonly string[];
  next: readonly string[];
  /** The key (and address) that made the change; absent when not a key of the account. */
  caller?: ApiKeyCaller;
  at: Date;
}

/** The durable event that tells the account's owners and administrators about the change. */
export function ipAllowListChangedEvent(change: IpAllowListChange): ApiKeyIpAllowListChangedEvent {
  const at = change.at.toISOString();
  return {
    id: randomUUID(),
    type: 'api_key.ip_allow_list_changed',
    timestamp: at,
    data: {
      account_id: change.accountId,
      key_id: change.keyId,
      label: change.label,
      previous_ip_allow_list: [...change.previous],
      ip_allow_list: [...change.next],
      changed_by_key_id: change.caller?.key_id ?? null,
      changed_from_ip: change.caller?.ip ?? null,
      changed_at: at,
    },
  };
}
