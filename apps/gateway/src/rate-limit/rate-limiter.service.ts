import {
  AccountRateLimiter,
  type GcraDecision,
  LocalRateLimiter,
  type RateLimit,
  retryAfterSeconds,
} from '@envoi/shared-edge';
import { Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

import { ApiError } from '../errors/api-error';
import { GatewayConfig } from '../gateway.config';
import { edgeRouteConfig, type RateLimitClass } from '../http/edge-route';
import { accountLimits } from './account-limits';
import { ReplicaRateLimits } from './replica-rate-limits.service';

export const RATE_LIMITED_MESSAGE = 'Too many requests, rate limited.';

/**
 * Per-account rate limits (spec 8), held with every replica in memory (ReplicaRateLimits, see
 * README), and the public routes' per-client-IP limits.
 */
@Injectable()
export class RateLimiter {
  private readonly accounts: AccountRateLimiter<RateLimitClass>;
  private readonly trackingLimit: RateLimit;
  /** Public routes' buckets, by client IP: never shared, never mixed with accounts'. */
  private readonly perClientIp = new LocalRateLimiter();

  constructor(
    replicas: ReplicaRateLimits,
    private readonly config: GatewayConfig,
  ) {
    this.accounts = new AccountRateLimiter({
      mode: config.RATE_LIMIT_MODE,
      limits: accountLimits(config),
      replicated: replicas.limiter,
    });
    this.trackingLimit = {
      perSecond: config.RATE_LIMIT_TRACKING_PER_SECOND,
      burst: config.RATE_LIMIT_TRACKING_BURST,
    };
  }

  /** Fastify onRequest hook, after authentication: 429 with Retry-After over the limit. */
  onRequest(request: FastifyRequest): Promise<void> {
    const decision = this.decisionFor(request);
    if (decision === undefined || decision.allowed) return Promise.resolve();
    return Promise.reject(
      new ApiError(429, RATE_LIMITED_MESSAGE, {
        'retry-after': String(retryAfterSeconds(decision.retryAfterMs)),
      }),
    );
  }

  /** The request's decision, or undefined when nothing limits it. */
  private decisionFor(request: FastifyRequest): GcraDecision | undefined {
    const principal = request.principal;
    const route = edgeRouteConfig(request);
    if (principal !== undefined) {
      return this.decide(principal.account_id, route.rateLimit ?? 'general');
    }
    // Public routes: only those that ask for it are limited, by client IP.
    if (!route.perClientIpLimit || this.config.RATE_LIMIT_MODE === 'off') return undefined;
    return this.perClientIp.take(request.ip, 'tracking', this.trackingLimit);
  }

  decide(accountId: string, limitClass: RateLimitClass): GcraDecision {
    return this.accounts.decide(accountId, limitClass);
  }
}
