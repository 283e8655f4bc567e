import type { Socket } from 'node:net';

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';

import { errorBody, sendError } from '../errors/http-errors.filter';
import { HEADERS_TOO_LARGE_MESSAGE } from './request-headers';

/** An answer to a request the router never saw (bad framing, oversized headers, timeouts). */
export interface ProtocolError {
  status: number;
  reason: string;
  message: string;
}

const BAD_REQUEST: ProtocolError = {
  status: 400,
  reason: 'Bad Request',
  message: 'malformed HTTP request',
};

/** Node's HTTP parser and server error codes, mapped to what the client is told. */
const CLIENT_ERRORS: Record<string, ProtocolError> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: 'Request Header Fields Too Large',
    message: HEADERS_TOO_LARGE_MESSAGE,
  },
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: 408,
    reason: 'Request Timeout',
    message: 'request not received in time',
  },
};

/** Errors Fastify's router raises before any route (and so any Nest filter) runs. */
const FRAMEWORK_ERRORS: Record<string, Pick<ProtocolError, 'status' | 'message'>> = {
  FST_ERR_BAD_URL: { status: 400, message: 'malformed request path' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, message: 'request path segment is too long' },
};

export function protocolErrorFor(code: string | undefined): ProtocolError {
  return (code !== undefined ? CLIENT_ERRORS[code] : undefined) ?? BAD_REQUEST;
}

/**
 * The path of the request line the parser gave up on ('' when it is not in these bytes), which
 * decides between the v1 and v2 error bodies. It is never echoed back.
 */
export function requestLinePath(rawPacket: unknown): string {
  if (!Buffer.isBuffer(rawPacket)) return '';
  const line = rawPacket.subarray(0, 512).toString('latin1');
  return /^[A-Z]+ (\/\S*)/.exec(line)?.[1] ?? '';
}

/** The raw HTTP/1.1 answer to a protocol error on `path`, closing the connection. */
export function protocolErrorResponse(error: ProtocolError, path: string): string {
  const body = JSON.stringify(errorBody(path, error.message));
  return [
    `HTTP/1.1 ${error.status} ${error.reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** Node hands the unparsed bytes as a Buffer (Fastify's types say otherwise). */
type ClientError = Error & { code?: string; rawPacket?: unknown };

/** How long a socket answered with a protocol error may take to take the answer. */
const FLUSH_GRACE_MS = 2_000;

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser rejects, or a client too slow to send
 * its request, gets the contract's error body instead of Fastify's own. A socket already holding
 * a response (a timeout after the answer) is only closed.
 */
export function answerClientError(error: ClientError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answered = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage
    ?.headersSent;
  if (!socket.writable || answered) {
    socket.destroy();
    return;
  }
  const response = protocolErrorResponse(
    protocolErrorFor(error.code),
    requestLinePath(error.rawPacket),
  );
  socket.end(response);
  socket.setTimeout(FLUSH_GRACE_MS, () => socket.destroy());
}

/** Fastify's `frameworkErrors`: router-level failures answered with the contract's body. */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const known = FRAMEWORK_ERRORS[error.code] ?? { status: 400, message: BAD_REQUEST.message };
  sendError(reply, request, { ...known, headers: {} });
}
