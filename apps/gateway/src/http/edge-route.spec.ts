import { Controller, Get, type INestApplication, Post, Req } from '@nestjs/common';
import { FastifyAdapter, RouteConfig } from '@nestjs/platform-fastify';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { Test } from '@nestjs/testing';
import type { FastifyRequest } from 'fastify';

import { Public, PUBLIC_METADATA } from '../auth/scope-policy';
import {
  EdgeRoute,
  type EdgeRouteConfig,
  edgeRouteConfig,
  Idempotent,
  StatisticsRateLimit,
} from './edge-route';

function routeConfigOf(handler: unknown): Record<string, unknown> | undefined {
  return Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler as object) as
    Record<string, unknown> | undefined;
}

class Handlers {
  @Idempotent()
  standard(): void {
    // a handler stub: only its decorators matter
  }

  @Idempotent('secret')
  secret(): void {
    // a handler stub: only its decorators matter
  }

  @StatisticsRateLimit()
  statistics(): void {
    // a handler stub: only its decorators matter
  }

  @Public()
  @Idempotent()
  publicAboveIdempotent(): void {
    // a handler stub: only its decorators matter
  }

  @Idempotent('secret')
  @Public()
  idempotentAbovePublic(): void {
    // a handler stub: only its decorators matter
  }

  @EdgeRoute({ rateLimit: 'statistics' })
  @RouteConfig({ owner: 'nest' })
  edgeAboveNestConfig(): void {
    // a handler stub: only its decorators matter
  }

  @EdgeRoute({ idempotency: 'secret' })
  @EdgeRoute({ idempotency: 'standard', rateLimit: 'statistics' })
  laterWins(): void {
    // a handler stub: only its decorators matter
  }

  undecorated(): void {
    // a handler stub: only its decorators matter
  }
}

describe('EdgeRoute decorators', () => {
  const handlers = Handlers.prototype;

  it('@Idempotent() defaults to the standard mode', () => {
    expect(routeConfigOf(handlers.standard)).toEqual({ idempotency: 'standard' });
  });

  it('@Idempotent("secret") selects the secret mode', () => {
    expect(routeConfigOf(handlers.secret)).toEqual({ idempotency: 'secret' });
  });

  it('@StatisticsRateLimit() selects the statistics limit', () => {
    expect(routeConfigOf(handlers.statistics)).toEqual({ rateLimit: 'statistics' });
  });

  it('keeps both @Public and @Idempotent in either order', () => {
    expect(routeConfigOf(handlers.publicAboveIdempotent)).toEqual({
      public: true,
      idempotency: 'standard',
    });
    expect(routeConfigOf(handlers.idempotentAbovePublic)).toEqual({
      public: true,
      idempotency: 'secret',
    });
    expect(Reflect.getMetadata(PUBLIC_METADATA, handlers.publicAboveIdempotent)).toBe(true);
    expect(Reflect.getMetadata(PUBLIC_METADATA, handlers.idempotentAbovePublic)).toBe(true);
  });

  it("merges into a route config set earlier by Nest's own @RouteConfig", () => {
    expect(routeConfigOf(handlers.edgeAboveNestConfig)).toEqual({
      owner: 'nest',
      rateLimit: 'statistics',
    });
  });

  it('lets the outer decorator win a key both set, keeping the others', () => {
    expect(routeConfigOf(handlers.laterWins)).toEqual({
      idempotency: 'secret',
      rateLimit: 'statistics',
    });
  });

  it('leaves undecorated handlers without a route config', () => {
    expect(routeConfigOf(handlers.undecorated)).toBeUndefined();
  });

  it('decorates the handler only, not its neighbours', () => {
    expect(routeConfigOf(handlers.standard)).not.toHaveProperty('public');
    expect(routeConfigOf(handlers.statistics)).not.toHaveProperty('idempotency');
  });
});

describe('edgeRouteConfig', () => {
  it('reads the route config of a request', () => {
    const request = {
      routeOptions: { config: { idempotency: 'secret', url: '/x', method: 'POST' } },
    } as unknown as FastifyRequest;
    expect(edgeRouteConfig(request).idempotency).toBe('secret');
  });

  it('is empty when the route has no config', () => {
    const request = { routeOptions: {} } as unknown as FastifyRequest;
    expect(edgeRouteConfig(request)).toEqual({});
  });
});

@Controller('edge')
class EdgeController {
  @Post('secret')
  @Public()
  @Idempotent('secret')
  secret(@Req() request: FastifyRequest): EdgeRouteConfig {
    return pick(edgeRouteConfig(request));
  }

  @Get('statistics')
  @StatisticsRateLimit()
  @RouteConfig({ owner: 'nest' })
  statistics(@Req() request: FastifyRequest): EdgeRouteConfig & { owner?: unknown } {
    const config = edgeRouteConfig(request) as EdgeRouteConfig & { owner?: unknown };
    return { ...pick(config), owner: config.owner };
  }

  @Get('plain')
  plain(@Req() request: FastifyRequest): EdgeRouteConfig {
    return pick(edgeRouteConfig(request));
  }
}

function pick(config: EdgeRouteConfig): EdgeRouteConfig {
  const { public: isPublic, idempotency, rateLimit } = config;
  return JSON.parse(
    JSON.stringify({ public: isPublic, idempotency, rateLimit }),
  ) as EdgeRouteConfig;
}

describe('EdgeRoute through Nest on Fastify', () => {
  let app: INestApplication | undefined;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ controllers: [EdgeController] }).compile();
    app = moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
    await app.init();
    await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
  });

  afterAll(async () => {
    await app?.close();
  });

  async function configSeenBy(method: 'GET' | 'POST', url: string): Promise<unknown> {
    const fastify = app?.getHttpAdapter().getInstance() as {
      inject(options: { method: string; url: string }): Promise<{ json(): unknown }>;
    };
    const response = await fastify.inject({ method, url });
    return response.json();
  }

  it('reaches request.routeOptions.config of the Fastify route', async () => {
    await expect(configSeenBy('POST', '/edge/secret')).resolves.toEqual({
      public: true,
      idempotency: 'secret',
    });
  });

  it("keeps Nest's @RouteConfig beside the edge settings", async () => {
    await expect(configSeenBy('GET', '/edge/statistics')).resolves.toEqual({
      rateLimit: 'statistics',
      owner: 'nest',
    });
  });

  it('gives undecorated routes no edge settings', async () => {
    await expect(configSeenBy('GET', '/edge/plain')).resolves.toEqual({});
  });
});
