import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';
import { GatewayConfig } from '../gateway.config';
import { edgeRouteConfig, type RateLimitClass } from '../http/edge-route';
import { LOGGER } from '../logger.provider';
import { type GcraDecision, type RateLimit, retryAfterSeconds } from './gcra';
import { LocalRateLimiter } from './local-rate-limiter';
import { SharedRateLimiter } from './shared-rate-limiter';

export const RATE_LIMITED_MESSAGE = 'Too many requests, rate limited.';

const ALLOWED: GcraDecision = { allowed: true, tatMs: 0, retryAfterMs: 0 };

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`rate limit store slower than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Per-account rate limits (spec 8), counted across every replica in PostgreSQL. When the store
 * fails or answers too slowly, the limiter switches to its fallback for a while instead of making
 * every request wait or fail: `local` (default) enforces the same limits per replica, `open`
 * enforces none. The limiter never turns a store outage into failed requests.
 */
@Injectable()
export class RateLimiter {
  private readonly limits: Record<RateLimitClass, RateLimit>;
  private readonly trackingLimit: RateLimit;
  private readonly local = new LocalRateLimiter();
  /** Public routes' buckets, by client IP: never shared, never mixed with accounts'. */
  private readonly perClientIp = new LocalRateLimiter();
  private storeUnavailableUntil = 0;

  constructor(
    private readonly shared: SharedRateLimiter,
    private readonly config: GatewayConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.limits = {
      general: {
        perSecond: config.RATE_LIMIT_GENERAL_PER_SECOND,
        burst: config.RATE_LIMIT_GENERAL_BURST,
      },
      statistics: {
        perSecond: config.RATE_LIMIT_STATISTICS_PER_SECOND,
        burst: config.RATE_LIMIT_STATISTICS_BURST,
      },
    };
    this.trackingLimit = {
      perSecond: config.RATE_LIMIT_TRACKING_PER_SECOND,
      burst: config.RATE_LIMIT_TRACKING_BURST,
    };
  }

  /** Fastify onRequest hook, after authentication: 429 with Retry-After over the limit. */
  async onRequest(request: FastifyRequest): Promise<void> {
    const principal = request.principal;
    const route = edgeRouteConfig(request);
    let decision: GcraDecision;
    if (principal === undefined) {
      // Public routes: only those that ask for it are limited, by client IP.
      if (!route.perClientIpLimit || this.config.RATE_LIMIT_MODE === 'off') return;
      decision = this.perClientIp.take(request.ip, 'tracking', this.trackingLimit);
    } else {
      decision = await this.decide(principal.account_id, route.rateLimit ?? 'general');
    }
    if (!decision.allowed) {
      throw new ApiError(429, RATE_LIMITED_MESSAGE, {
        'retry-after': String(retryAfterSeconds(decision.retryAfterMs)),
      });
    }
  }

  async decide(accountId: string, limitClass: RateLimitClass): Promise<GcraDecision> {
    const limit = this.limits[limitClass];
    if (this.config.RATE_LIMIT_MODE === 'off') return ALLOWED;
    if (this.config.RATE_LIMIT_MODE === 'local')
      return this.local.take(accountId, limitClass, limit);
    if (Date.now() >= this.storeUnavailableUntil) {
      try {
        return await withTimeout(
          this.shared.take(accountId, limitClass, limit),
          this.config.RATE_LIMIT_STORE_TIMEOUT_MS,
        );
      } catch (error) {
        this.storeUnavailableUntil = Date.now() + this.config.RATE_LIMIT_STORE_RETRY_MS;
        this.logger.warn(
          { err: error, fallback: this.config.RATE_LIMIT_FALLBACK },
          'rate limit store unavailable; using the fallback',
        );
      }
    }
    if (this.config.RATE_LIMIT_FALLBACK === 'open') return ALLOWED;
    return this.local.take(accountId, limitClass, limit);
  }
}
