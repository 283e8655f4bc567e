import { MESSAGE_STATUSES, type MessageFilters, TAGS_MAX } from '@envoi/contracts-messages';

import { ApiError } from '../errors/api-error';

type Query = Record<string, string | string[] | undefined>;

const STATUS_BY_LOWERCASE = new Map(
  MESSAGE_STATUSES.map((status) => [status.toLowerCase(), status]),
);
const TEXT_FILTERS = ['sender', 'recipient', 'subject', 'message_id_header'] as const;
const TIME_FILTERS = ['from_time', 'to_time'] as const;
/** RFC 3339 date-time, as the contract's `format: date-time`. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new ApiError(400, `${name} may be given only once`);
  return value;
}

function commaList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

/**
 * getMessages filters (reference contract): `status` and `tags` as comma-separated lists, status
 * names matched without regard to case (the CLI sends lowercase), times as RFC 3339.
 */
export function readMessageFilters(query: Query): MessageFilters {
  const filters: MessageFilters = {};
  const status = single(query, 'status');
  if (status !== undefined) {
    filters.status = commaList(status).map((name) => {
      const canonical = STATUS_BY_LOWERCASE.get(name.toLowerCase());
      if (canonical === undefined) throw new ApiError(400, `unknown status: ${name}`);
      return canonical;
    });
  }
  const tags = single(query, 'tags');
  if (tags !== undefined) {
    filters.tags = commaList(tags);
    if (filters.tags.length > TAGS_MAX) {
      throw new ApiError(400, `at most ${TAGS_MAX} tags may be given`);
    }
  }
  for (const name of TEXT_FILTERS) {
    const value = single(query, name);
    if (value !== undefined && value.length > 0) filters[name] = value;
  }
  for (const name of TIME_FILTERS) {
    const value = single(query, name);
    if (value === undefined) continue;
    if (!DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) {
      throw new ApiError(400, `${name} must be an RFC 3339 date-time`);
    }
    filters[name] = value;
  }
  if (
    filters.from_time !== undefined &&
    filters.to_time !== undefined &&
    Date.parse(filters.from_time) > Date.parse(filters.to_time)
  ) {
    throw new ApiError(400, 'from_time must not be after to_time');
  }
  return filters;
}
