import { randomUUID } from 'node:crypto';

import { NatsModule } from '@envoi/shared-nats';
import { Body, Controller, Module, Param, Post } from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';

import { GatewayDatabase } from '../src/database/gateway-database';
import { ApiError } from '../src/errors/api-error';
import { HttpErrorsFilter } from '../src/errors/http-errors.filter';
import { GatewayConfig } from '../src/gateway.config';
import { configureFastify } from '../src/http/configure-fastify';
import { Idempotent } from '../src/http/edge-route';
import { IdempotencyHooks } from '../src/idempotency/idempotency.hooks';
import { IdempotencyRepository } from '../src/idempotency/idempotency.repository';
import { IDEMPOTENCY_MESSAGES } from '../src/idempotency/idempotency-policy';
import { IdempotencyStore } from '../src/idempotency/idempotency-store';
import { LOGGER } from '../src/logger.provider';
import { RateLimiter } from '../src/rate-limit/rate-limiter.service';
import { ReplicaRateLimits } from '../src/rate-limit/replica-rate-limits.service';
import {
  gatewayTestConfig,
  migrateGatewaySchema,
  newAccountId,
  sendRequest,
  silentLogger,
  testPrincipal,
  type TestResponse,
} from './gateway-test-support';

const ACCOUNT_HEADER = 'x-test-account';
const executions = new Map<string, number>();

function counted(accountId: string, route: string): void {
  const name = `${accountId} ${route}`;
  executions.set(name, (executions.get(name) ?? 0) + 1);
}

function executionsOf(accountId: string, route: string): number {
  return executions.get(`${accountId} ${route}`) ?? 0;
}

@Controller('v2/accounts/:account_id')
class TestController {
  @Post('things')
  @Idempotent()
  create(@Param('account_id') accountId: string, @Body() body: unknown): object {
    counted(accountId, 'things');
    return { id: randomUUID(), echo: body ?? null };
  }

  @Post('api-keys')
  @Idempotent('secret')
  createKey(@Param('account_id') accountId: string, @Body() body: { fail?: boolean }): object {
    counted(accountId, 'api-keys');
    if (body.fail) throw new ApiError(400, 'invalid scopes');
    return { id: randomUUID(), secret_key: `envoi-sk-${randomUUID()}` };
  }

  @Post('failing')
  @Idempotent()
  fail(@Param('account_id') accountId: string): never {
    counted(accountId, 'failing');
    throw new Error('handler failure');
  }
}

/**
 * The edge stages wired into a Nest application on Fastify the way main.ts does it: without
 * Nest's body parsers, so configureFastify's strict JSON parser is the only one.
 */
describe('idempotency under Nest on Fastify', () => {
  let app: NestFastifyApplication | undefined;
  let baseUrl = '';
  const config = gatewayTestConfig({
    RATE_LIMIT_GENERAL_PER_SECOND: '100000',
    RATE_LIMIT_GENERAL_BURST: '100000',
    IDEMPOTENCY_LEASE_MS: '60000',
  });

  beforeAll(async () => {
    await migrateGatewaySchema();
    const logger = silentLogger();

    @Module({
      imports: [NatsModule.forRoot({ servers: config.natsServers(), name: 'gateway-test' })],
      controllers: [TestController],
      providers: [
        { provide: GatewayConfig, useValue: config },
        { provide: LOGGER, useValue: logger },
        GatewayDatabase,
        IdempotencyRepository,
        IdempotencyStore,
        IdempotencyHooks,
        ReplicaRateLimits,
        RateLimiter,
        { provide: APP_FILTER, useFactory: () => new HttpErrorsFilter(logger) },
      ],
    })
    class TestModule {}

    app = await NestFactory.create<NestFastifyApplication>(
      TestModule,
      new FastifyAdapter({ genReqId: () => randomUUID(), requestIdHeader: false, logger: false }),
      { logger: false, bodyParser: false },
    );
    configureFastify(app.getHttpAdapter().getInstance(), {
      authenticator: {
        onRequest: (request: FastifyRequest) => {
          const accountId = request.headers[ACCOUNT_HEADER];
          if (typeof accountId === 'string') request.principal = testPrincipal(accountId);
          return Promise.resolve();
        },
      },
      rateLimiter: app.get(RateLimiter),
      idempotency: app.get(IdempotencyHooks),
      unreadBodyDrainMs: config.HTTP_UNREAD_BODY_DRAIN_MS,
      accessLog: logger,
    });
    await app.init();
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    baseUrl = `http://127.0.0.1:${address.port}`;
  });

  afterAll(async () => {
    await app?.close();
  });

  function send(accountId: string, route: string, key: string, body: string) {
    return sendRequest(baseUrl, 'POST', `/v2/accounts/${accountId}/${route}`, {
      headers: { [ACCOUNT_HEADER]: accountId, 'idempotency-key': key },
      body,
    });
  }

  function expectReplayOf(response: TestResponse, original: TestResponse): void {
    expect(response.status).toBe(original.status);
    expect(response.headers['idempotent-replayed']).toBe('true');
    expect(response.body.equals(original.body)).toBe(true);
  }

  it('replays a controller response byte for byte', async () => {
    const accountId = newAccountId();
    const fresh = await send(accountId, 'things', 'k', '{"n":1}');
    expect(fresh.status).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.json()).toMatchObject({ echo: { n: 1 } });
    expectReplayOf(await send(accountId, 'things', 'k', '{"n":1}'), fresh);
    expect(executionsOf(accountId, 'things')).toBe(1);
  });

  it('fingerprints the body the JSON parser reads: another body is a 422', async () => {
    const accountId = newAccountId();
    await send(accountId, 'things', 'k', '{"n":1}');
    const other = await send(accountId, 'things', 'k', '{"n":2}');
    expect(other.status).toBe(422);
    expect(other.json()).toEqual({ message: IDEMPOTENCY_MESSAGES.mismatch });
    expect(executionsOf(accountId, 'things')).toBe(1);
  });

  it('refuses a __proto__ key with 400 before any execution', async () => {
    const accountId = newAccountId();
    const response = await send(accountId, 'things', 'k', '{"__proto__":{"x":1}}');
    expect(response.status).toBe(400);
    expect(executionsOf(accountId, 'things')).toBe(0);
  });

  it('refuses a duplicate key with 400 and the contract body, before any execution', async () => {
    const accountId = newAccountId();
    const response = await send(accountId, 'things', 'k', '{"n":1,"n":2}');
    expect(response.status).toBe(400);
    expect(response.json()).toEqual({ message: 'duplicate key "n" in JSON object' });
    expect(executionsOf(accountId, 'things')).toBe(0);
  });

  it('releases the key when the controller fails (500) so a retry executes', async () => {
    const accountId = newAccountId();
    expect((await send(accountId, 'failing', 'k', '{}')).status).toBe(500);
    expect((await send(accountId, 'failing', 'k', '{}')).status).toBe(500);
    expect(executionsOf(accountId, 'failing')).toBe(2);
  });

  it('holds the key after a secret-bearing 4xx raised by the controller', async () => {
    const accountId = newAccountId();
    const fresh = await send(accountId, 'api-keys', 'k', '{"fail":true}');
    expect(fresh.status).toBe(400);
    expect(fresh.json()).toEqual({ message: 'invalid scopes' });
    const held = await send(accountId, 'api-keys', 'k', '{"fail":true}');
    expect(held.status).toBe(409);
    expect(held.headers['idempotent-replayed']).toBe('false');
    expect(held.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(executionsOf(accountId, 'api-keys')).toBe(1);
  });

  it('replays a secret-bearing 201 with the same secret', async () => {
    const accountId = newAccountId();
    const fresh = await send(accountId, 'api-keys', 'k', '{"label":"x"}');
    expect(fresh.status).toBe(201);
    const replay = await send(accountId, 'api-keys', 'k', '{"label":"x"}');
    expectReplayOf(replay, fresh);
    expect(executionsOf(accountId, 'api-keys')).toBe(1);
  });
});
