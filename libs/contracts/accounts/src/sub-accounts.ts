import { isHostname, normalizeDomainName, NullAsAbsent, WithPage } from '@envoi/contracts-core';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsDefined,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateNested,
} from 'class-validator';

import { AccountRef, CreateApiKeyBody, UpdateApiKeyBody } from './requests';

/**
 * Spec 3.1. An account's status is derived, never stored: `deleted` once soft-deleted; otherwise
 * the later of its own suspension and its parent's decides between `suspended` and
 * `parent-suspended`; `active` when neither holds.
 */
export const ACCOUNT_STATUSES = ['active', 'suspended', 'parent-suspended', 'deleted'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** Largest `monthly_credit` (reference contract). */
export const MONTHLY_CREDIT_MAX = 1_000_000_000;

// ---- Records ----

/** Platform notes 2.6: every field is required on the wire. */
export interface SubAccountRecord {
  object: 'sub_account';
  id: string;
  parent_account_id: string;
  created_at: string;
  name: string;
  /** An FQDN (`acme.example.com`), not a URL. */
  website: string;
  status: AccountStatus;
  /** Messages per calendar month (UTC); 0 means no cap. */
  monthly_credit: number;
  domain_count: number;
  member_count: number;
  last_activity_at: string | null;
}

export interface UsageBucket {
  account_id?: string;
  name?: string;
  reception_count: number;
  allocated_cost: number;
}

/** The usage of the current billing period (calendar month, UTC), platform notes 2.6. */
export interface SubAccountsUsageRecord {
  billing_period: { start: string; end: string };
  currency: string;
  allocation_method: 'proportional';
  allocation_note: string;
  parent: UsageBucket & { account_id: string };
  sub_accounts: (UsageBucket & { account_id: string; name: string })[];
  removed_sub_accounts: UsageBucket;
  total: UsageBucket;
}

/** Internal (messages service): what accepting a send needs of its account, in one answer. */
export interface AccountSendingRecord {
  account_id: string;
  /** Only an `active` account sends; the others' sends are refused. */
  status: AccountStatus;
  track_opens: boolean;
  track_clicks: boolean;
  message_metadata_retention: number;
  message_data_retention: number;
  /** The cap on messages per billing period, enforced at accept; 0 = none. */
  monthly_credit: number;
}

/** An operator's view of an account's status (admin CLI). */
export interface AccountStatusRecord {
  account_id: string;
  status: AccountStatus;
  /** Its sub-accounts, each with its status after the change. */
  sub_accounts: { account_id: string; status: AccountStatus }[];
}

/** The statuses of the accounts asked for that exist (any order); unknown ids are left out. */
export interface AccountStatusesRecord {
  statuses: { account_id: string; status: AccountStatus }[];
}

// ---- Public request bodies ----

/** Trimmed before validation; a blank name is then empty and refused. */
const Trimmed = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value), {
    toClassOnly: true,
  });

/** A website as the contract wants it: an FQDN of at most 255 characters, stored lowercase. */
const Website = () =>
  ValidateBy({
    name: 'isWebsiteFqdn',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && value.length <= 255 && isHostname(normalizeDomainName(value)),
      defaultMessage: () => 'website must be a fully qualified domain name (acme.example.com)',
    },
  });

export class CreateSubAccountBody {
  @Trimmed() @IsString() @IsNotEmpty() @Length(1, 255) name!: string;
  @IsString() @Website() website!: string;
  @NullAsAbsent()
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MONTHLY_CREDIT_MAX)
  monthly_credit?: number;
}

/** Null or omitted fields stay unchanged; at least one given value must differ (else 400). */
export class UpdateSubAccountBody {
  @NullAsAbsent() @IsOptional() @Trimmed() @IsString() @IsNotEmpty() @Length(1, 255) name?: string;
  @NullAsAbsent() @IsOptional() @IsString() @Website() website?: string;
  @NullAsAbsent()
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MONTHLY_CREDIT_MAX)
  monthly_credit?: number;
}

export class SuspendSubAccountBody {
  @Trimmed() @IsString() @IsNotEmpty() @MaxLength(500) reason!: string;
}

// ---- Bus requests ----

/** `account_id` is the parent; a sub-account of another parent is not found. */
export class SubAccountRef extends AccountRef {
  @IsUUID() sub_account_id!: string;
}

export class ListSubAccountsRequest extends WithPage {
  @IsUUID() account_id!: string;
}

export class CreateSubAccountRequest extends AccountRef {
  @IsDefined()
  @ValidateNested()
  @Type(() => CreateSubAccountBody)
  sub_account!: CreateSubAccountBody;
}

export class UpdateSubAccountRequest extends SubAccountRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateSubAccountBody) changes!: UpdateSubAccountBody;
}

export class SuspendSubAccountRequest extends SubAccountRef {
  @IsDefined()
  @ValidateNested()
  @Type(() => SuspendSubAccountBody)
  suspension!: SuspendSubAccountBody;
}

/** An operator's suspension of any account (admin CLI); a parent's cascades to its children. */
export class SuspendAccountRequest extends AccountRef {
  @Trimmed() @IsString() @IsNotEmpty() @MaxLength(500) reason!: string;
}

/** Largest number of accounts one accountStatuses request may ask about. */
export const ACCOUNT_STATUSES_MAX_IDS = 1_000;

/** The statuses of many accounts in one call (delivery holds the mail of non-active ones). */
export class AccountStatusesRequest {
  @IsArray()
  @ArrayMaxSize(ACCOUNT_STATUSES_MAX_IDS)
  @IsUUID('all', { each: true })
  account_ids!: string[];
}

export class ListSubAccountApiKeysRequest extends WithPage {
  @IsUUID() account_id!: string;
  @IsUUID() sub_account_id!: string;
}

/** Scopes and domains are checked against the child, whose key it becomes. */
export class CreateSubAccountApiKeyRequest extends SubAccountRef {
  @IsDefined() @ValidateNested() @Type(() => CreateApiKeyBody) key!: CreateApiKeyBody;
}

export class SubAccountApiKeyRef extends SubAccountRef {
  @IsUUID() key_id!: string;
}

/** As updateApiKey, without the self-lockout guard (spec 5.7). */
export class UpdateSubAccountApiKeyRequest extends SubAccountApiKeyRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateApiKeyBody) changes!: UpdateApiKeyBody;
}

// ---- Events ----

/**
 * Broadcast (no queue group) whenever accounts change status: the gateways forget their keys'
 * verifications, senders and workers their cached statuses. Lists every account affected (a
 * parent and its children).
 */
export class AccountStatusChangedEvent {
  @IsUUID('all', { each: true }) account_ids!: string[];
}
