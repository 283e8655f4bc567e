import type { Page, PageRequest, PaginatedList } from '@envoi/contracts-core';
import { PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN } from '@envoi/contracts-core';

import { ApiError } from '../errors/api-error';
import type { CursorCodec } from './cursor-codec';

type Query = Record<string, string | string[] | undefined>;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new ApiError(400, `${name} may be given only once`);
  return value;
}

/**
 * Reads `limit`, `after`, `before` (and `cursor`, an alias of `after` that existing clients send)
 * into a service PageRequest, rejecting out-of-range limits, both directions, and bad cursors.
 */
export function readPageRequest(
  query: Query,
  codec: CursorCodec,
  accountId: string,
  list: string,
): PageRequest {
  const rawLimit = single(query, 'limit');
  let limit = PAGE_LIMIT_DEFAULT;
  if (rawLimit !== undefined) {
    limit = /^[0-9]{1,4}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= PAGE_LIMIT_MIN && limit <= PAGE_LIMIT_MAX)) {
      throw new ApiError(400, `limit must be between ${PAGE_LIMIT_MIN} and ${PAGE_LIMIT_MAX}`);
    }
  }
  const afterParam = single(query, 'after');
  const cursorParam = single(query, 'cursor');
  if (afterParam !== undefined && cursorParam !== undefined && afterParam !== cursorParam) {
    throw new ApiError(400, 'cursor is an alias of after; give only one of them');
  }
  const after = afterParam ?? cursorParam;
  const before = single(query, 'before');
  if (after !== undefined && before !== undefined) {
    throw new ApiError(400, 'after and before are mutually exclusive');
  }
  const page: PageRequest = { limit };
  if (after !== undefined) page.after = decodeOrReject(codec, after, accountId, list, 'after');
  if (before !== undefined) page.before = decodeOrReject(codec, before, accountId, list, 'before');
  return page;
}

function decodeOrReject(
  codec: CursorCodec,
  cursor: string,
  accountId: string,
  list: string,
  name: string,
): string {
  const position = cursor === '' ? null : codec.decode(cursor, accountId, list);
  if (position === null) throw new ApiError(400, `invalid ${name} cursor`);
  return position;
}

/** Wraps a service page into the public envelope with opaque cursors. */
export function toPaginatedList<T>(
  page: Page<T>,
  codec: CursorCodec,
  accountId: string,
  list: string,
): PaginatedList<T> {
  const pagination: PaginatedList<T>['pagination'] = { has_more: page.has_more };
  if (page.next_position !== undefined) {
    pagination.next_cursor = codec.encode(accountId, list, page.next_position);
  }
  if (page.previous_position !== undefined) {
    pagination.previous_cursor = codec.encode(accountId, list, page.previous_position);
  }
  return { object: 'list', data: page.data, pagination };
}
