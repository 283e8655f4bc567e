import 'reflect-metadata';

import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

import { GATEWAY_CONTROLLERS } from './controllers';
import type { EdgeRouteConfig } from './http/edge-route';
import { declaredRoutes } from './routes';

interface Route {
  name: string;
  method: string;
  config: EdgeRouteConfig;
}

/** Every route the gateway serves, with its Fastify route config. */
function routes(): Route[] {
  return declaredRoutes(GATEWAY_CONTROLLERS).map((route) => ({
    name: route.name,
    method: route.method,
    config: (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, route.handler) ??
      {}) as EdgeRouteConfig,
  }));
}

/**
 * POSTs that are not creations (spec 8: they accept Idempotency-Key and ignore it). Everything
 * else a client POSTs creates something and must honour the key.
 */
const NON_IDEMPOTENT_POSTS = new Set([
  'POST /v2/accounts/:account_id/domains/:domain/check-dns',
  'POST /v2/accounts/:account_id/sub-accounts/:sub_account_id/suspend',
  'POST /v2/accounts/:account_id/sub-accounts/:sub_account_id/unsuspend',
  'POST /v2/accounts/:account_id/webhooks/:webhook_id/deliveries/:delivery_id/retry',
  // v1 has no idempotency (spec 4.1).
  'POST /v1/email/send',
]);

/** Creations whose 201 carries a secret: stored encrypted for minutes (spec 8). */
const SECRET_BEARING = new Set([
  'POST /v2/accounts/:account_id/api-keys',
  'POST /v2/accounts/:account_id/sub-accounts/:sub_account_id/api-keys',
  'POST /v2/accounts/:account_id/webhooks',
  'POST /v2/accounts/:account_id/smtp-credentials',
  'POST /v2/accounts/:account_id/routes',
]);

describe('route policy', () => {
  const all = routes();

  it('finds the routes', () => {
    expect(all.length).toBeGreaterThan(20);
  });

  it('finds every route of every controller', () => {
    expect(new Set(all.map((route) => route.name)).size).toBe(all.length);
    expect(all.map((route) => route.name)).toEqual(
      expect.arrayContaining([
        'GET /v2/ping',
        'POST /v1/email/send',
        'DELETE /v2/accounts/:account_id/domains/:domain',
      ]),
    );
  });

  it('honours Idempotency-Key on exactly the creations of spec 8, and nowhere else', () => {
    for (const route of all) {
      const name = route.name;
      const expected =
        route.method !== 'POST' || NON_IDEMPOTENT_POSTS.has(name)
          ? undefined
          : SECRET_BEARING.has(name)
            ? 'secret'
            : 'standard';
      expect({ route: name, idempotency: route.config.idempotency }).toEqual({
        route: name,
        idempotency: expected,
      });
    }
  });

  it('lists only routes that exist in its exceptions', () => {
    const names = new Set(all.map((route) => route.name));
    for (const name of [...NON_IDEMPOTENT_POSTS, ...SECRET_BEARING]) expect(names).toContain(name);
  });
});
