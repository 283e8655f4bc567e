import type { FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';

/**
 * The most a request line and its headers may hold. Node's parser is given more room
 * (NODE_HEADER_ROOM_BYTES) so that requests between the two are refused here, where the route —
 * and so the v1 or v2 error body — is known.
 */
export const HEADER_LIMIT_BYTES = 16 * 1024;
export const NODE_HEADER_ROOM_BYTES = 64 * 1024;

export const HEADERS_TOO_LARGE_MESSAGE = 'request line and headers are too large';

/** How many times a header (lowercase name) occurs in Node's raw name/value list. */
export function headerCount(rawHeaders: readonly string[], name: string): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index].toLowerCase() === name) count += 1;
  }
  return count;
}

/** 431 when the request line and headers, as sent, exceed HEADER_LIMIT_BYTES. */
export function assertHeadersWithinLimit(request: FastifyRequest): void {
  let size = request.raw.url?.length ?? 0;
  for (const part of request.raw.rawHeaders) size += part.length + 2;
  if (size > HEADER_LIMIT_BYTES) throw new ApiError(431, HEADERS_TOO_LARGE_MESSAGE);
}
