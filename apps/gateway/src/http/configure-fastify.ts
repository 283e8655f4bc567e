import { pipeline, Transform } from 'node:stream';

import { type Logger, runInTraceContext } from '@envoi/shared-observability';
import type { FastifyInstance, FastifyRequest, RequestPayload } from 'fastify';

import type { Authenticator } from '../auth/authenticator.service';
import { ApiError } from '../errors/api-error';
import { sendError, toErrorResponse } from '../errors/http-errors.filter';
import type { IdempotencyHooks } from '../idempotency/idempotency.hooks';
import { IDEMPOTENCY_KEY_HEADER } from '../idempotency/idempotency-policy';
import type { RateLimiter } from '../rate-limit/rate-limiter.service';
import { edgeRouteConfig } from './edge-route';
import { assertHeadersWithinLimit } from './request-headers';
import { requestTraceContext } from './request-trace';
import { parseStrictJson, StrictJsonError } from './strict-json';
import { drainUnreadBodyOnClose } from './unread-body';
import { checkUrlText } from './url-text';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Passes the body through unchanged and keeps a copy of its bytes in `request.rawBody`. */
function teeRawBody(request: FastifyRequest, payload: RequestPayload): RequestPayload {
  const chunks: Buffer[] = [];
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback(null, chunk);
    },
    flush(callback) {
      request.rawBody = Buffer.concat(chunks);
      callback();
    },
  });
  // Errors and aborts reach the parser through `tee`, which pipeline destroys with them.
  pipeline(payload, tee, () => undefined);
  return tee;
}

function parseJsonBody(
  _request: FastifyRequest,
  body: Buffer,
  done: (error: Error | null, body?: unknown) => void,
): void {
  let parsed: unknown;
  try {
    parsed = parseStrictJson(body);
  } catch (error) {
    done(error instanceof StrictJsonError ? new ApiError(400, error.message) : (error as Error));
    return;
  }
  done(null, parsed);
}

/** The edge stages that run as Fastify hooks, below Nest's guards and pipes. */
export interface EdgeStages {
  authenticator: Pick<Authenticator, 'onRequest'>;
  rateLimiter: Pick<RateLimiter, 'onRequest'>;
  idempotency: Pick<IdempotencyHooks, 'preHandler' | 'onSend' | 'onResponse'>;
  /** How long an upload answered before it was read is still read and discarded. */
  unreadBodyDrainMs: number;
  /** Gets one line per answered request. */
  accessLog: Pick<Logger, 'info'>;
}

/**
 * Edge behaviour that sits below Nest, in this order: request id, authentication (credentials,
 * IP allow list, account path), rate limit, query and path text, then — once the JSON body is
 * read — idempotency.
 * What fails before a route runs (bad JSON, body too large, 415) is answered by the error
 * handler: Nest's, or installEdgeErrorHandler's without Nest.
 */
export function configureFastify(fastify: FastifyInstance, stages: EdgeStages): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    assertHeadersWithinLimit(request);
    done();
  });
  fastify.addHook('onRequest', (request) => stages.authenticator.onRequest(request));
  fastify.addHook('onRequest', (request) => stages.rateLimiter.onRequest(request));
  // A throw here reaches the error handler like a rejected hook.
  fastify.addHook('onRequest', (request, _reply, done) => {
    checkUrlText(request);
    done();
  });
  // From here (the body is read) the handler and everything it calls run in the request's trace
  // context: RPC headers, outbox rows and log lines carry its request id.
  fastify.addHook('preValidation', (request, _reply, done) => {
    runInTraceContext(requestTraceContext(request), done);
  });
  fastify.addHook('preHandler', (request, reply) => stages.idempotency.preHandler(request, reply));
  fastify.addHook('onSend', (request, reply, payload) =>
    stages.idempotency.onSend(request, reply, payload),
  );
  fastify.addHook('onSend', (request, reply, payload, done) => {
    drainUnreadBodyOnClose(request, reply, stages.unreadBodyDrainMs);
    done(null, payload);
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    stages.idempotency.onResponse(request);
    stages.accessLog.info(
      {
        request_id: request.id,
        account_id: request.principal?.account_id,
        method: request.method,
        route: request.routeOptions.url ?? null,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
      'request answered',
    );
    done();
  });

  // The only body parser (main.ts gives Nest bodyParser: false): strict JSON, see strict-json.ts.
  // The raw bytes of an idempotent request's body, for the fingerprint, are teed off the stream
  // it reads. text/plain bodies are refused with 415.
  fastify.removeContentTypeParser('text/plain');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody);
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    const fingerprinted =
      edgeRouteConfig(request).idempotency !== undefined &&
      request.headers[IDEMPOTENCY_KEY_HEADER] !== undefined;
    done(null, fingerprinted ? teeRawBody(request, payload) : payload);
  });
}

/**
 * Contract-shaped errors for a Fastify instance without Nest. Under Nest, its own error handler
 * (installed at init, and running the same HttpErrorsFilter) answers these, and a second
 * handler in the same scope would only be replaced (Fastify's FSTWRN004).
 */
export function installEdgeErrorHandler(fastify: FastifyInstance, logger: Logger): void {
  fastify.setErrorHandler((error, request, reply) => {
    sendError(reply, request, toErrorResponse(error, logger, request.id));
  });
}
