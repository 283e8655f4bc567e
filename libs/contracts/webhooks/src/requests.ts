import { NullAsAbsent, WithPage } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsDefined,
  IsIn,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';

import { WEBHOOK_EVENT_FLAGS, WEBHOOK_SCOPES, type WebhookScope } from './records';

export const WEBHOOK_NAME_MAX = 255;
export const WEBHOOK_URL_MAX = 2048;
/** Domains one scoped webhook may be linked to. */
export const WEBHOOK_DOMAINS_MAX = 100;
export const DOMAIN_NAME_INPUT_MAX = 300;

// ---- Public request bodies (validated at the edge, re-validated by the service) ----

/** `enabled` and the 10 event flags: optional, null leaves them unset. */
export class WebhookSwitches {
  @NullAsAbsent() @IsOptional() @IsBoolean() enabled?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_reception?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_delivered?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_transient_error?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_failed?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_bounced?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_suppressed?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_opened?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_clicked?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_suppression_created?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() on_dns_error?: boolean;
}

/** The `domains` of a body: null leaves them unset. */
function WebhookDomains(): PropertyDecorator {
  return (target, property) => {
    NullAsAbsent()(target, property);
    IsOptional()(target, property);
    IsArray()(target, property);
    ArrayMaxSize(WEBHOOK_DOMAINS_MAX)(target, property);
    IsString({ each: true })(target, property);
    MaxLength(DOMAIN_NAME_INPUT_MAX, { each: true })(target, property);
  };
}

/** POST /webhooks (reference CreateWebhookRequest). */
export class CreateWebhookBody extends WebhookSwitches {
  @IsString() @Length(1, WEBHOOK_NAME_MAX) name!: string;
  @IsString() @Length(1, WEBHOOK_URL_MAX) url!: string;
  @IsIn(WEBHOOK_SCOPES) scope!: WebhookScope;

  /** Scoped: required and non-empty (checked by the service); global: ignored. */
  @WebhookDomains() domains?: string[];
}

/** PUT /webhooks/{id} (reference UpdateWebhookRequest): null or omitted leaves a field unchanged. */
export class UpdateWebhookBody extends WebhookSwitches {
  @NullAsAbsent() @IsOptional() @IsString() @Length(1, WEBHOOK_NAME_MAX) name?: string;
  @NullAsAbsent() @IsOptional() @IsString() @Length(1, WEBHOOK_URL_MAX) url?: string;
  @NullAsAbsent() @IsOptional() @IsIn(WEBHOOK_SCOPES) scope?: WebhookScope;

  /** `[]` clears the list. */
  @WebhookDomains() domains?: string[];
}

/** The filters of GET /webhooks, parsed from the query by the gateway. */
export class WebhookFilters extends WebhookSwitches {}

export const WEBHOOK_FILTER_NAMES = ['enabled', ...WEBHOOK_EVENT_FLAGS] as const;

// ---- Bus requests ----

/**
 * `domains`: the domains a domain-scoped key holds the route's scope for; absent for a key that
 * holds it for every domain. Such a key sees only webhooks linked to at least one of them.
 */
export function DomainRestriction(): PropertyDecorator {
  return (target, property) => {
    IsOptional()(target, property);
    IsArray()(target, property);
    IsString({ each: true })(target, property);
    MaxLength(DOMAIN_NAME_INPUT_MAX, { each: true })(target, property);
  };
}

export class ListWebhooksRequest extends WithPage {
  @IsUUID() account_id!: string;
  @IsOptional() @ValidateNested() @Type(() => WebhookFilters) filters?: WebhookFilters;
  @DomainRestriction() domains?: string[];
}

export class CreateWebhookRequest {
  @IsUUID() account_id!: string;
  @DomainRestriction() domains?: string[];
  @IsDefined() @ValidateNested() @Type(() => CreateWebhookBody) body!: CreateWebhookBody;
}

export class WebhookRef {
  @IsUUID() account_id!: string;
  @IsUUID() webhook_id!: string;
  @DomainRestriction() domains?: string[];
}

export class UpdateWebhookRequest extends WebhookRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateWebhookBody) changes!: UpdateWebhookBody;
}
