import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import type { FastifyRequest } from 'fastify';

/** How a route takes part in idempotency (spec 7.5 and 8). */
export type IdempotencyMode =
  /** Outcomes are stored for 24 hours: 2xx and 4xx replayed, 5xx released. */
  | 'standard'
  /** Secret-bearing creations: a 2xx is stored encrypted for minutes, a 4xx holds the lease. */
  | 'secret';

/** Which per-account rate limit a route counts against (spec 8). */
export type RateLimitClass = 'general' | 'statistics';

/**
 * What the Fastify hooks below Nest need to know about a route, carried in Fastify's route config
 * so the hooks can act before the body is parsed or the handler runs.
 */
export interface EdgeRouteConfig {
  public?: boolean;
  idempotency?: IdempotencyMode;
  rateLimit?: RateLimitClass;
  /** A public route limited per client IP (in each replica), e.g. the tracking routes. */
  perClientIpLimit?: boolean;
}

/** Merges into the route's Fastify config (Nest's own RouteConfig would overwrite earlier ones). */
export function EdgeRoute(config: EdgeRouteConfig): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as object;
    const existing = Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, handler) as
      EdgeRouteConfig | undefined;
    Reflect.defineMetadata(FASTIFY_ROUTE_CONFIG_METADATA, { ...existing, ...config }, handler);
    return descriptor;
  };
}

/** Honours `Idempotency-Key` on this POST (every other route ignores the header). */
export const Idempotent = (mode: IdempotencyMode = 'standard') => EdgeRoute({ idempotency: mode });

/** Counts against the statistics limit instead of the general one. */
export const StatisticsRateLimit = () => EdgeRoute({ rateLimit: 'statistics' });

/** A public route whose requests count per client IP (they carry no account). */
export const PerClientIpRateLimit = () => EdgeRoute({ perClientIpLimit: true });

export function edgeRouteConfig(request: FastifyRequest): EdgeRouteConfig {
  return (request.routeOptions.config ?? {}) as EdgeRouteConfig;
}
