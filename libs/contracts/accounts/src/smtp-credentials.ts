import { NullAsAbsent, WithPage } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsIP,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';

import { AccountRef } from './requests';
import type { AccountStatus } from './sub-accounts';

export const SMTP_CREDENTIAL_SCOPES = ['global', 'scoped'] as const;
export type SmtpCredentialScope = (typeof SMTP_CREDENTIAL_SCOPES)[number];

export const SMTP_CREDENTIAL_NAME_MAX = 255;
/** Domains one scoped credential may be linked to. */
export const SMTP_CREDENTIAL_DOMAINS_MAX = 100;
/** Longest username or password a client may present at AUTH (longer is refused unchecked). */
export const SMTP_LOGIN_FIELD_MAX = 256;

// ---- Records (reference SMTPCredential, platform notes 2.10) ----

export interface SmtpCredentialRecord {
  object: 'credential_smtp';
  id: string;
  created_at: string;
  updated_at: string;
  name: string;
  username: string;
  sandbox: boolean;
  scope: SmtpCredentialScope;
  /** Domain names; `[]` for a global credential. */
  domains: string[];
}

/** Returned once, by create: the password is never shown by the API again. */
export interface CreatedSmtpCredentialRecord extends SmtpCredentialRecord {
  password: string;
}

// ---- Public request bodies ----

/** POST /smtp-credentials (reference CreateSMTPCredentialRequest). */
export class CreateSmtpCredentialBody {
  @IsString() @Length(1, SMTP_CREDENTIAL_NAME_MAX) name!: string;
  @IsIn(SMTP_CREDENTIAL_SCOPES) scope!: SmtpCredentialScope;
  @NullAsAbsent() @IsOptional() @IsBoolean() sandbox?: boolean;

  /** Scoped: required and non-empty (checked by the service); global: accepted and ignored. */
  @NullAsAbsent()
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(SMTP_CREDENTIAL_DOMAINS_MAX)
  @IsString({ each: true })
  @MaxLength(300, { each: true })
  domains?: string[];
}

// ---- Bus requests ----

/**
 * The domains a domain-scoped API key may see or act on; absent when the key holds the action's
 * `:all` scope. The service answers "not found" for credentials linked to none of them.
 */
export class SmtpCredentialAccess extends AccountRef {
  @IsOptional() @IsArray() @IsString({ each: true }) domains?: string[];
}

export class ListSmtpCredentialsRequest extends WithPage {
  @IsUUID() account_id!: string;
  @IsOptional() @IsArray() @IsString({ each: true }) domains?: string[];
}

export class CreateSmtpCredentialRequest extends AccountRef {
  @IsDefined()
  @ValidateNested()
  @Type(() => CreateSmtpCredentialBody)
  credential!: CreateSmtpCredentialBody;
}

export class SmtpCredentialRef extends SmtpCredentialAccess {
  @IsUUID() credential_id!: string;
}

/**
 * An SMTP AUTH attempt, from the smtp edge. The password travels on the internal bus (as the
 * client sent it over TLS) because the service verifies it against a slow hash; it is never
 * logged or echoed.
 */
export class VerifySmtpLoginRequest {
  @IsString() @Length(1, SMTP_LOGIN_FIELD_MAX) username!: string;
  @IsString() @Length(1, SMTP_LOGIN_FIELD_MAX) password!: string;
  /** The client's address, for the failed-login throttle. */
  @IsOptional() @IsIP() remote_address?: string;
}

/** A verified SMTP login: what the edge needs to authorise MAIL FROM and accept mail. */
export interface VerifiedSmtpLogin {
  credential_id: string;
  account_id: string;
  /** Anything but `active` is refused with 521. */
  account_status: AccountStatus;
  scope: SmtpCredentialScope;
  /** Lowercase domain names; `[]` for a global credential. */
  domains: string[];
  /** A sandbox credential always simulates. */
  sandbox: boolean;
}

/** Broadcast to every smtp replica (no queue group): drop cached logins of the credential. */
export class SmtpCredentialChangedEvent {
  @IsUUID() credential_id!: string;
  @IsUUID() account_id!: string;
  @IsString() username!: string;
}
