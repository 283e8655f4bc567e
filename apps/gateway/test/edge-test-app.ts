import { randomUUID } from 'node:crypto';

import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';

import type { GatewayDatabase } from '../src/database/gateway-database';
import type { GatewayConfig } from '../src/gateway.config';
import { configureFastify, installEdgeErrorHandler } from '../src/http/configure-fastify';
import type { EdgeRouteConfig } from '../src/http/edge-route';
import { parseQueryString } from '../src/http/query-string';
import { IdempotencyHooks } from '../src/idempotency/idempotency.hooks';
import { IdempotencyRepository } from '../src/idempotency/idempotency.repository';
import { IdempotencyStore } from '../src/idempotency/idempotency-store';
import {
  type Gate,
  newGate,
  openDatabase,
  sendRequest,
  silentLogger,
  testPrincipal,
  type TestResponse,
} from './gateway-test-support';
import { startRateLimitReplica } from './rate-limit-replica';

/** The account a test request acts for (the test stand-in for API-key authentication). */
export const ACCOUNT_HEADER = 'x-test-account';

export const THINGS = (accountId: string) => `/v2/accounts/${accountId}/things`;

/**
 * A real Fastify 5 server with the gateway's edge stages (real idempotency hooks over the real
 * database, real rate limiter on the real NATS) and test routes whose handlers the test controls. Executions are
 * counted per account, so tests running side by side never see each other's.
 */
export interface EdgeTestApp {
  baseUrl: string;
  database: GatewayDatabase;
  executions(accountId: string, route: string): number;
  /** Handlers parked on the `slow` route, in arrival order. */
  parked(accountId: string): number;
  /** Lets every parked handler of the account answer. */
  releaseParked(accountId: string): void;
  send(
    method: string,
    path: string,
    options?: { accountId?: string; key?: string; body?: string; headers?: Record<string, string> },
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

const standard: EdgeRouteConfig = { idempotency: 'standard' };
const secret: EdgeRouteConfig = { idempotency: 'secret' };

interface ThingBody {
  fail?: boolean;
}

export async function startEdgeTestApp(config: GatewayConfig): Promise<EdgeTestApp> {
  const logger = silentLogger();
  const database = openDatabase(config);
  const rateLimits = await startRateLimitReplica(config);
  const counts = new Map<string, number>();
  const gates = new Map<string, Gate>();
  const parked = new Map<string, number>();

  const accountOf = (request: FastifyRequest) =>
    (request.params as { account_id: string }).account_id;
  const count = (request: FastifyRequest, route: string) => {
    const name = `${accountOf(request)} ${route}`;
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return counts.get(name) ?? 0;
  };
  const gateOf = (accountId: string) => {
    let gate = gates.get(accountId);
    if (!gate) {
      gate = newGate();
      gates.set(accountId, gate);
    }
    return gate;
  };

  const fastify: FastifyInstance = Fastify({
    logger: false,
    genReqId: () => randomUUID(),
    bodyLimit: config.BODY_LIMIT_BYTES,
    querystringParser: parseQueryString,
  });
  configureFastify(fastify, {
    authenticator: {
      onRequest: (request) => {
        const accountId = request.headers[ACCOUNT_HEADER];
        if (typeof accountId === 'string') request.principal = testPrincipal(accountId);
        return Promise.resolve();
      },
    },
    rateLimiter: rateLimits.limiter,
    idempotency: new IdempotencyHooks(
      new IdempotencyStore(new IdempotencyRepository(database)),
      config,
      logger,
    ),
    unreadBodyDrainMs: config.HTTP_UNREAD_BODY_DRAIN_MS,
    accessLog: logger,
  });
  installEdgeErrorHandler(fastify, logger);

  fastify.post('/v2/accounts/:account_id/things', { config: standard }, (request, reply) => {
    count(request, 'things');
    return reply.status(201).send({ id: randomUUID(), echo: request.body ?? null });
  });
  fastify.put('/v2/accounts/:account_id/things', { config: standard }, (request, reply) => {
    count(request, 'things-put');
    return reply.status(200).send({ id: randomUUID() });
  });
  fastify.post('/v2/accounts/:account_id/other-things', { config: standard }, (request, reply) => {
    count(request, 'other-things');
    return reply.status(201).send({ id: randomUUID() });
  });
  fastify.post('/v2/accounts/:account_id/invalid', { config: standard }, (request, reply) => {
    count(request, 'invalid');
    return reply.status(400).send({ message: `invalid thing ${randomUUID()}` });
  });
  fastify.post('/v2/accounts/:account_id/failing', { config: standard }, (request) => {
    count(request, 'failing');
    throw new Error('handler failure');
  });
  /** The first execution per account waits for the test; later ones answer at once. */
  fastify.post('/v2/accounts/:account_id/slow', { config: standard }, async (request, reply) => {
    const accountId = accountOf(request);
    if (count(request, 'slow') === 1) {
      parked.set(accountId, (parked.get(accountId) ?? 0) + 1);
      await gateOf(accountId).promise;
    }
    return reply.status(201).send({ id: randomUUID() });
  });
  fastify.post('/v2/accounts/:account_id/api-keys', { config: secret }, (request, reply) => {
    count(request, 'api-keys');
    if ((request.body as ThingBody | undefined)?.fail) {
      return reply.status(400).send({ message: 'invalid scopes' });
    }
    return reply.status(201).send({ id: randomUUID(), secret_key: `envoi-sk-${randomUUID()}` });
  });
  fastify.post('/v2/accounts/:account_id/plain', (request, reply) => {
    count(request, 'plain');
    return reply.status(201).send({ id: randomUUID() });
  });

  await fastify.listen({ host: '127.0.0.1', port: 0 });
  const address = fastify.server.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const baseUrl = `http://127.0.0.1:${address.port}`;

  return {
    baseUrl,
    database,
    executions: (accountId, route) => counts.get(`${accountId} ${route}`) ?? 0,
    parked: (accountId) => parked.get(accountId) ?? 0,
    releaseParked: (accountId) => gateOf(accountId).open(),
    send: (method, path, options = {}) =>
      sendRequest(baseUrl, method, path, {
        headers: {
          ...(options.accountId === undefined ? {} : { [ACCOUNT_HEADER]: options.accountId }),
          ...(options.key === undefined ? {} : { 'idempotency-key': options.key }),
          ...options.headers,
        },
        ...(options.body === undefined ? {} : { body: options.body }),
      }),
    async close() {
      for (const gate of gates.values()) gate.open();
      await fastify.close();
      await database.onApplicationShutdown();
      await rateLimits.stop();
    },
  };
}
