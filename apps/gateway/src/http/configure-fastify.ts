import type { Logger } from '@envoi/shared-observability';
import type { FastifyInstance } from 'fastify';

import type { Authenticator } from '../auth/authenticator.service';
import { sendError, toErrorResponse } from '../errors/http-errors.filter';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Edge behaviour that sits below Nest: request ids on every response, JSON-only bodies, and
 * contract-shaped errors for what fails before a route runs (bad JSON, body too large, 415).
 */
export function configureFastify(
  fastify: FastifyInstance,
  authenticator: Authenticator,
  logger: Logger,
): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  fastify.addHook('onRequest', (request) => authenticator.onRequest(request));
  // Only application/json bodies are accepted; anything else is 415.
  fastify.removeContentTypeParser('text/plain');
  fastify.setErrorHandler((error, request, reply) => {
    sendError(reply, request, toErrorResponse(error, logger, request.id));
  });
}
