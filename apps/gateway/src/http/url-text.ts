import type { FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';

export const URL_TEXT_MESSAGES = {
  badQueryEncoding: 'query string is not valid percent-encoded UTF-8',
  nulInQuery: 'query parameters must not contain NUL characters',
  nulInPath: 'path parameters must not contain NUL characters',
} as const;

/**
 * Refuses a query string or path parameter that PostgreSQL text cannot hold, or that the query
 * parser would pass on undecoded. The query is checked in its raw form, so this holds whatever
 * parser turns it into `request.query`. The router already refuses a path that is not valid
 * percent-encoded UTF-8, and decoding valid UTF-8 never yields an unpaired surrogate.
 */
export function checkUrlText(request: Pick<FastifyRequest, 'url' | 'params'>): void {
  const queryStart = request.url.indexOf('?');
  if (queryStart !== -1) checkQuery(request.url.slice(queryStart + 1));
  const params = request.params;
  if (typeof params !== 'object' || params === null) return;
  for (const value of Object.values(params)) {
    if (typeof value === 'string' && value.includes('\0')) {
      throw new ApiError(400, URL_TEXT_MESSAGES.nulInPath);
    }
  }
}

function checkQuery(query: string): void {
  if (!query.includes('%')) return;
  let decoded: string;
  try {
    decoded = decodeURIComponent(query);
  } catch {
    throw new ApiError(400, URL_TEXT_MESSAGES.badQueryEncoding);
  }
  if (decoded.includes('\0')) throw new ApiError(400, URL_TEXT_MESSAGES.nulInQuery);
}
