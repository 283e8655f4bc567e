import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

import type { FastifyServerOptions } from 'fastify';

import type { GatewayConfig } from '../gateway.config';
import type { ListenerLimits } from './https-only-listener';
import { answerClientError, answerFrameworkError } from './protocol-errors';
import { parseQueryString } from './query-string';
import { NODE_HEADER_ROOM_BYTES } from './request-headers';

/**
 * The longest path parameter the router accepts: a domain name is at most 253 characters, and
 * percent-encoding may triple it.
 */
export const MAX_PATH_PARAMETER_LENGTH = 1024;

/** How often Node checks connections against the headers and request timeouts. */
function connectionsCheckingInterval(config: GatewayConfig): number {
  return Math.max(50, Math.min(1_000, Math.floor(config.HTTP_HEADERS_TIMEOUT_MS / 4)));
}

/**
 * The gateway's HTTPS server: TLS from files, timeouts for every phase of a connection (handshake,
 * headers, whole request, idleness), and protocol errors answered with the contract's body.
 */
export function gatewayServerOptions(config: GatewayConfig): FastifyServerOptions & {
  https: Record<string, unknown>;
} {
  const trustedProxies = config.trustedProxies();
  return {
    https: {
      key: readFileSync(config.TLS_KEY_FILE),
      cert: readFileSync(config.TLS_CERT_FILE),
      handshakeTimeout: config.TLS_HANDSHAKE_TIMEOUT_MS,
      maxHeaderSize: NODE_HEADER_ROOM_BYTES,
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: connectionsCheckingInterval(config),
    },
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: config.HTTP_IDLE_TIMEOUT_MS,
    connectionTimeout: config.HTTP_IDLE_TIMEOUT_MS,
    trustProxy: trustedProxies.length > 0 ? trustedProxies : false,
    bodyLimit: config.BODY_LIMIT_BYTES,
    querystringParser: parseQueryString,
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    logger: false,
  };
}

export function listenerLimits(config: GatewayConfig): ListenerLimits {
  return {
    firstByteTimeoutMs: config.TLS_HANDSHAKE_TIMEOUT_MS,
    maxConnectionsPerIp: config.HTTP_MAX_CONNECTIONS_PER_IP,
    maxConnections: config.HTTP_MAX_CONNECTIONS,
    unlimitedAddresses: config.trustedProxies(),
  };
}
