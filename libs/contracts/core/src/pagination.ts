import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Matches, Max, Min, ValidateNested } from 'class-validator';

export const PAGE_LIMIT_MIN = 1;
export const PAGE_LIMIT_MAX = 100;
export const PAGE_LIMIT_DEFAULT = 100;

/** A service's keyset position: the decimal `seq` of a row. Opaque to everyone but that service. */
const POSITION_PATTERN = /^[0-9]{1,19}$/;

/**
 * A page request as services receive it. The gateway turns the public opaque, signed cursors
 * into these positions after verifying them, so services never see a forged cursor.
 */
export class PageRequest {
  @IsInt()
  @Min(PAGE_LIMIT_MIN)
  @Max(PAGE_LIMIT_MAX)
  limit: number = PAGE_LIMIT_DEFAULT;

  @IsOptional()
  @IsString()
  @Matches(POSITION_PATTERN)
  after?: string;

  @IsOptional()
  @IsString()
  @Matches(POSITION_PATTERN)
  before?: string;
}

/** A page as services return it; the gateway turns positions into public cursors. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_position?: string;
  previous_position?: string;
}

/** The public list envelope (spec 2.8). */
export interface PaginatedList<T> {
  object: 'list';
  data: T[];
  pagination: { has_more: boolean; next_cursor?: string; previous_cursor?: string };
}

/** An unpaginated list (members, statistics, create-suppression). */
export interface PlainList<T> {
  object: 'list';
  data: T[];
}

/** Helper for request classes that carry a page. */
export class WithPage {
  @ValidateNested()
  @Type(() => PageRequest)
  page: PageRequest = new PageRequest();
}
