import 'reflect-metadata';

import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';

import { PUBLIC_METADATA, SCOPES_METADATA } from './auth/scopes';
import { GATEWAY_CONTROLLERS } from './controllers';
import type { EdgeRouteConfig } from './http/edge-route';

interface Route {
  method: string;
  path: string;
  config: EdgeRouteConfig;
  scoped: boolean;
  isPublic: boolean;
}

function joinPath(...parts: string[]): string {
  return `/${parts
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter(Boolean)
    .join('/')}`;
}

/** Every route the gateway serves, read from the controllers' decorator metadata. */
function routes(): Route[] {
  return GATEWAY_CONTROLLERS.flatMap((controller) => {
    const base = Reflect.getMetadata(PATH_METADATA, controller) as string;
    const prototype = controller.prototype as unknown as Record<string, unknown>;
    return Object.getOwnPropertyNames(prototype)
      .filter((name) => name !== 'constructor')
      .map((name) => prototype[name])
      .filter((handler): handler is object => typeof handler === 'function')
      .filter((handler) => Reflect.getMetadata(PATH_METADATA, handler) !== undefined)
      .map((handler) => ({
        method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number] ?? '?',
        path: joinPath(base, Reflect.getMetadata(PATH_METADATA, handler) as string),
        config: (Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) ??
          {}) as EdgeRouteConfig,
        scoped: Reflect.getMetadata(SCOPES_METADATA, handler) !== undefined,
        isPublic: Reflect.getMetadata(PUBLIC_METADATA, handler) === true,
      }));
  });
}

/**
 * POSTs that are not creations (spec 8: they accept Idempotency-Key and ignore it). Everything
 * else a client POSTs creates something and must honour the key.
 */
const NON_IDEMPOTENT_POSTS = new Set([
  'POST /v2/accounts/:account_id/domains/:domain/check-dns',
  // v1 has no idempotency (spec 4.1).
  'POST /v1/email/send',
]);

/** Creations whose 201 carries a secret: stored encrypted for minutes (spec 8). */
const SECRET_BEARING = new Set(['POST /v2/accounts/:account_id/api-keys']);

describe('route policy', () => {
  const all = routes();

  it('finds the routes', () => {
    expect(all.length).toBeGreaterThan(20);
  });

  it.each(all.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s declares its scopes or is public',
    (_name, route) => {
      expect(route.scoped || route.isPublic).toBe(true);
    },
  );

  it('honours Idempotency-Key on exactly the creations of spec 8, and nowhere else', () => {
    for (const route of all) {
      const name = `${route.method} ${route.path}`;
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
    const names = new Set(all.map((route) => `${route.method} ${route.path}`));
    for (const name of [...NON_IDEMPOTENT_POSTS, ...SECRET_BEARING]) expect(names).toContain(name);
  });
});
