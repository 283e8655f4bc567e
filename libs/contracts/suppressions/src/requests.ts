import { EmptyAsAbsent, WithPage } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateNested,
  type ValidationOptions,
} from 'class-validator';

import { parseRfc3339 } from './addresses';

/** Raw input is normalised by the service (trim, lowercase); room for surrounding whitespace. */
export const EMAIL_INPUT_MAX = 320;
export const DOMAIN_NAME_INPUT_MAX = 300;
export const REASON_MAX = 255;
/** Addresses one send-time check may ask about (a send has at most 100 recipients). */
export const CHECK_EMAILS_MAX = 1_000;

/** The most suppressions a snapshot may be asked to carry. */
export const SNAPSHOT_SUPPRESSIONS_MAX = 1_000;
/** A snapshot whose reply would be larger (long reasons) is answered null, as one too many. */
export const SNAPSHOT_REPLY_MAX_BYTES = 512 * 1024;

/** How long an automatic suppression lasts when the caller gives no expiry (reference: 30 days). */
export const AUTOMATIC_SUPPRESSION_DEFAULT_DAYS = 30;

/** An RFC 3339 date-time string that is a real instant. */
export function IsRfc3339DateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRfc3339DateTime',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && parseRfc3339(value) !== null,
        defaultMessage: (args) =>
          `${args?.property ?? 'value'} must be an RFC 3339 date-time such as 2030-01-01T00:00:00Z`,
      },
    },
    options,
  );
}

// ---- Public request bodies (validated at the edge, re-validated by the service) ----

/** POST /suppressions (reference CreateSuppressionRequest). */
export class CreateSuppressionBody {
  @IsString() @MaxLength(EMAIL_INPUT_MAX) email!: string;

  /** Must be in the future. */
  @IsRfc3339DateTime() expires_at!: string;

  /** A hostname; omitted, empty or null: the suppression applies to every domain of the account. */
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain?: string;

  /** Omitted, empty or null: no reason (null in the record). */
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(REASON_MAX) reason?: string;
}

/** The filters of GET /suppressions (query parameters). */
export class SuppressionFilters {
  @IsOptional() @IsString() @MaxLength(EMAIL_INPUT_MAX) email?: string;
  @IsOptional() @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain?: string;
  /** Created at or after this instant. */
  @IsOptional() @IsRfc3339DateTime() from_time?: string;
  /** Created before this instant. */
  @IsOptional() @IsRfc3339DateTime() to_time?: string;
}

// ---- Bus requests ----

export class SuppressionsAccountRef {
  @IsUUID() account_id!: string;
}

/** Unexpired suppressions, newest first, filtered. */
export class ListSuppressionsRequest extends WithPage {
  @IsUUID() account_id!: string;
  @IsOptional() @ValidateNested() @Type(() => SuppressionFilters) filters?: SuppressionFilters;
}

export class CreateSuppressionRequest extends SuppressionsAccountRef {
  @IsDefined()
  @ValidateNested()
  @Type(() => CreateSuppressionBody)
  body!: CreateSuppressionBody;
}

/** Deletes the email's suppressions: every one, or only the one of `domain`. */
export class DeleteSuppressionRequest extends SuppressionsAccountRef {
  @IsString() @MaxLength(EMAIL_INPUT_MAX) email!: string;
  @IsOptional() @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain?: string;
}

/** Deletes every suppression of the account, or those of `domain` only. */
export class WipeSuppressionsRequest extends SuppressionsAccountRef {
  @IsOptional() @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain?: string;
}

/**
 * Internal, at send time: which of these recipients may not be sent to from `domain`? A
 * suppression applies when it is unexpired and its domain is null or the sender domain; addresses
 * are compared normalised (trimmed, lowercased).
 */
export class CheckSuppressionsRequest {
  @IsUUID() account_id!: string;

  /** The sender domain (the domain of the From address). */
  @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain!: string;

  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(CHECK_EMAILS_MAX)
  @IsString({ each: true })
  @MaxLength(EMAIL_INPUT_MAX, { each: true })
  emails!: string[];
}

/** Internal, for senders' caches: the account's unexpired suppressions, up to `max`. */
export class SuppressionSnapshotRequest {
  @IsUUID() account_id!: string;
  @IsInt() @Min(0) @Max(SNAPSHOT_SUPPRESSIONS_MAX) max!: number;
}

/**
 * Internal, for delivery: suppress an address after a hard bounce or repeated failures. When an
 * unexpired suppression already covers it (same domain, or null), nothing changes.
 */
export class CreateAutomaticSuppressionRequest {
  @IsUUID() account_id!: string;
  @IsString() @MaxLength(EMAIL_INPUT_MAX) email!: string;

  /** The sending domain it applies to; omitted or null: every domain of the account. */
  @IsOptional() @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain?: string | null;

  @IsString() @MinLength(1) @MaxLength(REASON_MAX) reason!: string;

  /** Default: AUTOMATIC_SUPPRESSION_DEFAULT_DAYS from now (the service's configuration). */
  @IsOptional() @IsRfc3339DateTime() expires_at?: string;
}
