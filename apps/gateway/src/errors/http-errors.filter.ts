import { CommonErrorCode } from '@envoi/contracts-core';
import { RpcError } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { ApiError } from './api-error';
import { statusForCode } from './error-status';

export interface ErrorResponse {
  status: number;
  message: string;
  headers: Record<string, string>;
}

const INTERNAL_MESSAGE = 'internal server error';
export const UNAVAILABLE_MESSAGE = 'service temporarily unavailable, retry later';
export const UNAVAILABLE_RETRY_AFTER_SECONDS = '5';

/** v2 answers `{"message"}`, v1 answers `{"status"}` (spec 7). */
export function errorBody(url: string, message: string): Record<string, string> {
  return url.startsWith('/v1/') ? { status: message } : { message };
}

function fastifyStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const status = (error as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

/** Maps anything thrown while serving a request to a status, a safe message and headers. */
export function toErrorResponse(error: unknown, logger: Logger, requestId: string): ErrorResponse {
  if (error instanceof ApiError) {
    return { status: error.status, message: error.message, headers: error.headers };
  }
  if (error instanceof RpcError) {
    const status = statusForCode(error.code);
    if (status === 503) {
      // A dependency outage says nothing specific; a service's own 503 (e.g. DNS resolvers not
      // answering a check) names what is unavailable. Both are retryable.
      logger.warn({ requestId, code: error.code, err: error }, 'dependency unavailable');
      return {
        status,
        message: error.hasCode(CommonErrorCode.Unavailable) ? UNAVAILABLE_MESSAGE : error.message,
        headers: { 'retry-after': UNAVAILABLE_RETRY_AFTER_SECONDS },
      };
    }
    if (status >= 500) {
      logger.error({ requestId, code: error.code, err: error }, 'service error');
      return { status, message: INTERNAL_MESSAGE, headers: {} };
    }
    return { status, message: error.message, headers: {} };
  }
  if (error instanceof HttpException && error.getStatus() === 404) {
    // Nest's router says "Cannot GET /v2/…": unknown routes answer like unknown resources.
    return { status: 404, message: 'not found', headers: {} };
  }
  if (error instanceof HttpException && error.getStatus() < 500) {
    const response = error.getResponse();
    const message =
      typeof response === 'object' && response !== null && 'message' in response
        ? [response.message].flat().join('; ')
        : error.message;
    return { status: error.getStatus(), message, headers: {} };
  }
  const clientStatus = fastifyStatus(error);
  if (clientStatus !== undefined) {
    return { status: clientStatus, message: (error as Error).message, headers: {} };
  }
  logger.error({ requestId, err: error }, 'unhandled error');
  return { status: 500, message: INTERNAL_MESSAGE, headers: {} };
}

export function sendError(
  reply: FastifyReply,
  request: FastifyRequest,
  response: ErrorResponse,
): void {
  void reply
    .status(response.status)
    .headers(response.headers)
    .type('application/json; charset=utf-8')
    .send(errorBody(request.url, response.message));
}

/** The single exception filter of the edge. */
@Catch()
export class HttpErrorsFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    sendError(reply, request, toErrorResponse(exception, this.logger, request.id));
  }
}
