import { NullAsAbsent, WithPage } from '@envoi/contracts-core';
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsDefined,
  IsOptional,
  IsString,
  IsUUID,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';

export const ROUTE_NAME_MAX = 255;
export const ROUTE_URL_MAX = 2048;
export const ROUTE_RECIPIENT_MAX = 255;

// ---- Public request bodies (validated at the edge, re-validated by the service) ----

/** POST /routes (reference CreateRouteRequest). */
export class CreateRouteBody {
  @IsString() @Length(1, ROUTE_NAME_MAX) name!: string;
  @IsString() @Length(1, ROUTE_URL_MAX) url!: string;
  /** A pattern (checked by the service); `""` matches every address of the account's domains. */
  @IsString() @MaxLength(ROUTE_RECIPIENT_MAX) recipient!: string;
  @NullAsAbsent() @IsOptional() @IsBoolean() attachments?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() headers?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() group_by_message_id?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() strip_replies?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() enabled?: boolean;
}

/** PUT /routes/{id} (reference UpdateRouteRequest): null or omitted leaves a field unchanged. */
export class UpdateRouteBody {
  @NullAsAbsent() @IsOptional() @IsString() @Length(1, ROUTE_NAME_MAX) name?: string;
  @NullAsAbsent() @IsOptional() @IsString() @Length(1, ROUTE_URL_MAX) url?: string;
  @NullAsAbsent() @IsOptional() @IsString() @MaxLength(ROUTE_RECIPIENT_MAX) recipient?: string;
  @NullAsAbsent() @IsOptional() @IsBoolean() attachments?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() headers?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() group_by_message_id?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() strip_replies?: boolean;
  @NullAsAbsent() @IsOptional() @IsBoolean() enabled?: boolean;
}

// ---- Bus requests ----

/**
 * `domains`: the domains a domain-scoped key holds the operation's scope for; absent for a key
 * that holds it for every domain. Such a key sees only routes of those domains (404 otherwise).
 */
class RouteAccess {
  @IsUUID() account_id!: string;
  @IsOptional() @IsArray() @IsString({ each: true }) domains?: string[];
}

export class ListRoutesRequest extends WithPage {
  @IsUUID() account_id!: string;
  @IsOptional() @IsArray() @IsString({ each: true }) domains?: string[];
  /** The `domain` query filter (required by the gateway for a domain-scoped key). */
  @IsOptional() @IsString() domain?: string;
}

export class CreateRouteRequest extends RouteAccess {
  @IsDefined() @ValidateNested() @Type(() => CreateRouteBody) body!: CreateRouteBody;
}

export class RouteRef extends RouteAccess {
  @IsUUID() route_id!: string;
}

export class UpdateRouteRequest extends RouteRef {
  @IsDefined() @ValidateNested() @Type(() => UpdateRouteBody) changes!: UpdateRouteBody;
}

/** The MX at RCPT: may this address receive mail, and for which account's routes? */
export class MatchRecipientRequest {
  @IsString() @Length(3, 320) recipient!: string;
}

export class DomainRoutesRequest {
  @IsString() @Length(1, 253) domain!: string;
}
