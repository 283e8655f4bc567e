import {
  AccountRateLimiter,
  type GcraDecision,
  LocalRateLimiter,
  type RateLimit,
  retryAfterSeconds,
} from '@envoi/shared-edge';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';
import { GatewayConfig } from '../gateway.config';
import { edgeRouteConfig, type RateLimitClass } from '../http/edge-route';
import { LOGGER } from '../logger.provider';
import { SharedRateLimiter } from './shared-rate-limiter';

export const RATE_LIMITED_MESSAGE = 'Too many requests, rate limited.';

/**
 * Per-account rate limits (spec 8), counted across every replica in PostgreSQL, with the
 * fallback of @envoi/shared-edge's AccountRateLimiter while the store cannot answer (see README).
 */
@Injectable()
export class RateLimiter {
  private readonly accounts: AccountRateLimiter<RateLimitClass>;
  private readonly trackingLimit: RateLimit;
  /** Public routes' buckets, by client IP: never shared, never mixed with accounts'. */
  private readonly perClientIp = new LocalRateLimiter();

  constructor(
    shared: SharedRateLimiter,
    private readonly config: GatewayConfig,
    @Inject(LOGGER) logger: Logger,
  ) {
    this.accounts = new AccountRateLimiter(shared, {
      mode: config.RATE_LIMIT_MODE,
      fallback: config.RATE_LIMIT_FALLBACK,
      limits: {
        general: {
          perSecond: config.RATE_LIMIT_GENERAL_PER_SECOND,
          burst: config.RATE_LIMIT_GENERAL_BURST,
        },
        statistics: {
          perSecond: config.RATE_LIMIT_STATISTICS_PER_SECOND,
          burst: config.RATE_LIMIT_STATISTICS_BURST,
        },
      },
      storeTimeoutMs: config.RATE_LIMIT_STORE_TIMEOUT_MS,
      storeRetryMs: config.RATE_LIMIT_STORE_RETRY_MS,
      onStoreUnavailable: (error) =>
        logger.warn(
          { err: error, fallback: config.RATE_LIMIT_FALLBACK },
          'rate limit store unavailable; using the fallback',
        ),
    });
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

  decide(accountId: string, limitClass: RateLimitClass): Promise<GcraDecision> {
    return this.accounts.decide(accountId, limitClass);
  }
}
