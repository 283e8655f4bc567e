import { EmptyAsAbsent, NullAsAbsent, WithPage } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsEmail,
  IsIn,
  IsInt,
  IsIP,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

import { MEMBER_ROLES, type MemberRole } from './records';

/** Longest list accepted before canonicalisation; the 100-entry rule applies after de-duplication. */
export const IP_ALLOW_LIST_INPUT_MAX = 1000;
export const SCOPES_INPUT_MAX = 500;

// ---- Public request bodies (validated at the edge, re-validated by the service) ----

/**
 * `""` and null leave the name and website unchanged (Go clients send every field), but `""`
 * clears `about`.
 */
export class UpdateAccountBody {
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(255) name?: string;
  @EmptyAsAbsent()
  @IsOptional()
  @IsUrl({ require_protocol: true, protocols: ['http', 'https'] })
  @MaxLength(2048)
  website?: string;
  @NullAsAbsent() @IsOptional() @IsString() @MaxLength(10000) about?: string;
  @NullAsAbsent() @IsOptional() @IsBoolean() track_opens?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() track_clicks?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() reject_bad_recipients?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() reject_mistyped_recipients?: boolean;
  @NullAsAbsent() @IsOptional() @IsInt() @Min(1) @Max(30) message_metadata_retention?: number;
  @NullAsAbsent() @IsOptional() @IsInt() @Min(0) @Max(30) message_data_retention?: number;
}

export class AddMemberBody {
  @IsEmail() @MaxLength(254) email!: string;
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(255) name?: string;
  @IsIn(MEMBER_ROLES) role!: MemberRole;
}

export class CreateApiKeyBody {
  @IsString() @Length(1, 255) label!: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES_INPUT_MAX)
  @IsString({ each: true })
  @MaxLength(300, { each: true })
  scopes!: string[];

  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(IP_ALLOW_LIST_INPUT_MAX)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  ip_allow_list?: string[];
}

/** Null, omitted (or, for the label, empty) fields stay unchanged; one provided value must differ. */
export class UpdateApiKeyBody {
  @EmptyAsAbsent() @IsOptional() @IsString() @Length(1, 255) label?: string | null;

  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES_INPUT_MAX)
  @IsString({ each: true })
  @MaxLength(300, { each: true })
  scopes?: string[] | null;

  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(IP_ALLOW_LIST_INPUT_MAX)
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  ip_allow_list?: string[] | null;
}

// ---- Bus requests ----

export class AccountRef {
  @IsUUID() account_id!: string;
}

export class CreateAccountRequest {
  @IsString() @Length(1, 255) name!: string;
  @IsOptional() @IsEmail() @MaxLength(254) owner_email?: string;
  @IsOptional() @IsString() @MaxLength(255) owner_name?: string;
  @IsOptional() @IsUUID() parent_account_id?: string;
}

export class UpdateAccountRequest extends AccountRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateAccountBody) changes!: UpdateAccountBody;
}

export class AddMemberRequest extends AccountRef {
  @IsDefined() @ValidateNested() @Type(() => AddMemberBody) member!: AddMemberBody;
}

export class RemoveMemberRequest extends AccountRef {
  @IsUUID() user_id!: string;
}

export class ListApiKeysRequest extends WithPage {
  @IsUUID() account_id!: string;
}

export class CreateApiKeyRequest extends AccountRef {
  @IsDefined() @ValidateNested() @Type(() => CreateApiKeyBody) key!: CreateApiKeyBody;
}

export class ApiKeyRef extends AccountRef {
  @IsUUID() key_id!: string;
}

/** Who is calling: used by the self-lockout guard of spec 5.7. */
export class ApiKeyCaller {
  @IsUUID() key_id!: string;
  @IsIP() ip!: string;
}

export class UpdateApiKeyRequest extends ApiKeyRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateApiKeyBody) changes!: UpdateApiKeyBody;

  /** Absent when a parent manages a sub-account's key: no self-lockout guard then. */
  @IsOptional() @ValidateNested() @Type(() => ApiKeyCaller) caller?: ApiKeyCaller;
}

export class VerifyApiKeyRequest {
  /** SHA-256 (hex) of the presented key: the secret itself never travels on the bus. */
  @Matches(/^[0-9a-f]{64}$/) secret_hash!: string;
}

// ---- Events ----

export class ApiKeyChangedEvent {
  @IsUUID() key_id!: string;
  @IsUUID() account_id!: string;
}

export class ApiKeyUse {
  @IsUUID() key_id!: string;
  @IsString() used_at!: string;
}

export class ApiKeysUsedEvent {
  @IsArray() @ValidateNested({ each: true }) @Type(() => ApiKeyUse) uses!: ApiKeyUse[];
}
