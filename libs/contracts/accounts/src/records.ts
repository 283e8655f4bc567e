/** Wire records, exactly as the public API returns them (reference contract field names). */

import type { AccountStatus } from './sub-accounts';

export interface AccountRecord {
  object: 'account';
  id: string;
  parent_account_id: string | null;
  created_at: string;
  updated_at: string;
  name: string;
  /** Null when the account has no website. */
  website: string | null;
  about: string;
  track_opens: boolean;
  track_clicks: boolean;
  reject_bad_recipients: boolean;
  reject_mistyped_recipients: boolean;
  message_metadata_retention: number;
  message_data_retention: number;
  owner_id: string;
}

export const MEMBER_ROLES = ['Administrator', 'Developer', 'Analyst', 'Billing Manager'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export interface MemberRecord {
  created_at: string;
  updated_at: string;
  user_id: string;
  account_id: string;
  role: MemberRole;
}

export interface ApiKeyScopeRecord {
  id: string;
  created_at: string;
  updated_at: string;
  api_key_id: string;
  /** Canonical scope string; a domain scope keeps its domain name (`messages:send:{example.com}`). */
  scope: string;
  /** The owned domain a domain scope names; null for static and `:all` scopes. */
  domain_id: string | null;
}

export interface ApiKeyRecord {
  object: 'api_key';
  id: string;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
  account_id: string;
  label: string;
  public_key: string;
  scopes: ApiKeyScopeRecord[];
  ip_allow_list: string[];
}

/** The 201 body of a key creation: the only place the secret ever appears. */
export interface CreatedApiKeyRecord extends ApiKeyRecord {
  secret_key: string;
}

/** What the edge needs to authorise a request made with a key. */
export interface VerifiedApiKey {
  key_id: string;
  account_id: string;
  parent_account_id: string | null;
  /** Anything but `active` is refused with 401 `Account is suspended`. */
  account_status: AccountStatus;
  /** Scope strings, domain scopes by name (`messages:send:{example.com}`); may be empty. */
  scopes: string[];
  ip_allow_list: string[];
}
