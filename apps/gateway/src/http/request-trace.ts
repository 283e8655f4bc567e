import { childTraceparent, type TraceContext } from '@envoi/shared-observability';
import type { FastifyRequest } from 'fastify';

/**
 * The trace context a request's handler runs in: its request id, the caller's W3C trace continued
 * (or a new one), and the authenticated account.
 */
export function requestTraceContext(request: FastifyRequest): TraceContext {
  const incoming = request.headers.traceparent;
  return {
    requestId: request.id,
    traceparent: childTraceparent(typeof incoming === 'string' ? incoming : undefined),
    ...(request.principal ? { accountId: request.principal.account_id } : {}),
  };
}
