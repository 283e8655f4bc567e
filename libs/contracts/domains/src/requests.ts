import { EmptyAsAbsent, NullAsAbsent, WithPage } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

/** Raw names are normalised by the service (trim, lowercase, trailing dot); room for that. */
export const DOMAIN_NAME_INPUT_MAX = 300;
export const SUBDOMAIN_INPUT_MAX = 200;
export const DKIM_PRIVATE_KEY_INPUT_MAX = 16_000;
export const RESOLVE_DOMAINS_MAX = 500;
export const DKIM_ROTATION_INTERVAL_MIN_DAYS = 30;
export const DKIM_ROTATION_INTERVAL_MAX_DAYS = 180;

// ---- Public request bodies (validated at the edge, re-validated by the service) ----

/** An optional subdomain: empty or null leaves it unset (the default, or unchanged). */
function OptionalSubdomain(): PropertyDecorator {
  const decorators = [EmptyAsAbsent(), IsOptional(), IsString(), MaxLength(SUBDOMAIN_INPUT_MAX)];
  return (target, property) => decorators.forEach((decorate) => decorate(target, property));
}

export class CreateDomainBody {
  @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain!: string;

  /** Bring-your-own DKIM key: an RSA private key (PEM) of 1024–4096 bits. */
  @EmptyAsAbsent()
  @IsOptional()
  @IsString()
  @MaxLength(DKIM_PRIVATE_KEY_INPUT_MAX)
  dkim_private_key?: string;

  @OptionalSubdomain() tracking_subdomain?: string;
  @OptionalSubdomain() return_path_subdomain?: string;
  @OptionalSubdomain() subscription_subdomain?: string;
  @OptionalSubdomain() media_subdomain?: string;

  @NullAsAbsent()
  @IsOptional()
  @IsInt()
  @Min(DKIM_ROTATION_INTERVAL_MIN_DAYS)
  @Max(DKIM_ROTATION_INTERVAL_MAX_DAYS)
  dkim_rotation_interval_days?: number;

  /** Empty, whitespace-only or null: the default selector. */
  @EmptyAsAbsent() @IsOptional() @IsString() @MaxLength(SUBDOMAIN_INPUT_MAX) dkim_selector?: string;
}

/**
 * Omitted, null (or, for a subdomain, empty) fields stay unchanged; for `dkim_selector` an empty
 * string clears it.
 */
export class UpdateDomainBody {
  @OptionalSubdomain() tracking_subdomain?: string | null;
  @OptionalSubdomain() return_path_subdomain?: string | null;
  @OptionalSubdomain() subscription_subdomain?: string | null;
  @OptionalSubdomain() media_subdomain?: string | null;

  @NullAsAbsent()
  @IsOptional()
  @IsInt()
  @Min(DKIM_ROTATION_INTERVAL_MIN_DAYS)
  @Max(DKIM_ROTATION_INTERVAL_MAX_DAYS)
  dkim_rotation_interval_days?: number | null;

  @NullAsAbsent()
  @IsOptional()
  @IsString()
  @MaxLength(SUBDOMAIN_INPUT_MAX)
  dkim_selector?: string | null;
}

// ---- Bus requests ----

export class DomainsAccountRef {
  @IsUUID() account_id!: string;
}

/** A domain of an account, by name as the public path carries it (normalised by the service). */
export class DomainRef extends DomainsAccountRef {
  @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain!: string;
}

export class ListDomainsRequest extends WithPage {
  @IsUUID() account_id!: string;
  /** Only domains whose `dns_valid` is this; omitted or null: every domain. */
  @IsOptional() @IsBoolean() dns_valid?: boolean | null;
}

export class CreateDomainRequest extends DomainsAccountRef {
  @IsDefined() @ValidateNested() @Type(() => CreateDomainBody) body!: CreateDomainBody;
}

export class UpdateDomainRequest extends DomainRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateDomainBody) changes!: UpdateDomainBody;
}

/** "May account X send from domain D?" — D is the domain of the From address. */
export class AuthorizeSenderRequest extends DomainRef {}

/** "Which key signs mail of account X from domain D?" — asked by the delivery service only. */
export class GetDkimSigningKeyRequest extends DomainRef {}

/** The MX: is this host a domain's verified return-path host (where its VERP bounces arrive)? */
export class MatchReturnPathHostRequest {
  @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) host!: string;
}

/** Which of these names does the account own (API-key domain scopes name owned domains)? */
export class ResolveDomainsRequest extends DomainsAccountRef {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(RESOLVE_DOMAINS_MAX)
  @IsString({ each: true })
  @MaxLength(DOMAIN_NAME_INPUT_MAX, { each: true })
  domains!: string[];
}

/** Which accounts have this domain name (the MX at RCPT time, through the routes service)? */
export class FindDomainOwnersRequest {
  @IsString() @MaxLength(DOMAIN_NAME_INPUT_MAX) domain!: string;
}

// ---- Events ----

export const DOMAIN_CHANGE_REASONS = ['updated', 'dns_validity', 'deleted'] as const;
export type DomainChangeReason = (typeof DOMAIN_CHANGE_REASONS)[number];

/** Broadcast to every replica of every service: drop cached sender authorizations of the domain. */
export class DomainChangedEvent {
  @IsUUID() domain_id!: string;
  @IsUUID() account_id!: string;
  @IsString() domain!: string;
  /** The domain's version after the change (see SenderAuthorization.version). */
  @IsInt() version!: number;
  @IsIn(DOMAIN_CHANGE_REASONS) reason!: DomainChangeReason;
}

/** Broadcast when a domain is deleted (also durable on the events stream, `events.domain.deleted.v1`). */
export class DomainDeletedEvent {
  @IsUUID() domain_id!: string;
  @IsUUID() account_id!: string;
  @IsString() domain!: string;
  @IsString() deleted_at!: string;
}

/** Most accounts one countDomains request may name (a page of sub-accounts). */
export const COUNT_DOMAINS_MAX_ACCOUNTS = 100;

/** How many domains each of these accounts has (the sub-accounts' `domain_count`). */
export class CountDomainsRequest {
  @IsArray()
  @ArrayMaxSize(COUNT_DOMAINS_MAX_ACCOUNTS)
  @IsUUID('all', { each: true })
  account_ids!: string[];
}
