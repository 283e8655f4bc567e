import type { StreamEvent } from '@envoi/contracts-core';
import { streamSubject } from '@envoi/contracts-core';
import { IsArray, IsIP, IsOptional, IsString, IsUUID } from 'class-validator';

/** An API key's IP allow list was set or changed (on creation with a list, or by an update). */
export class ApiKeyIpAllowListChangedData {
  @IsUUID() account_id!: string;
  @IsUUID() key_id!: string;
  @IsString() label!: string;
  /** `[]` for a key just created, or whose list was empty (every address allowed). */
  @IsArray() @IsString({ each: true }) previous_ip_allow_list!: string[];
  @IsArray() @IsString({ each: true }) ip_allow_list!: string[];
  /** The key that made the change, when a key of the account itself did. */
  @IsOptional() @IsUUID() changed_by_key_id!: string | null;
  /** The address the change came from, when known. */
  @IsOptional() @IsIP() changed_from_ip!: string | null;
  @IsString() changed_at!: string;
}

export type ApiKeyIpAllowListChangedEvent = StreamEvent<
  'api_key.ip_allow_list_changed',
  ApiKeyIpAllowListChangedData
>;

/** Durable events of the accounts service on the EVENTS stream, published through its outbox. */
export const AccountsStreamSubjects = {
  /** The owners and administrators of the account are told (platform notes 1.2). */
  apiKeyIpAllowListChanged: streamSubject<ApiKeyIpAllowListChangedEvent>(
    'events.api_key.ip_allow_list_changed.v1',
  ),
} as const;
