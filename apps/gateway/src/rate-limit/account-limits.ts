import type { RateLimit } from '@envoi/shared-edge';

import type { GatewayConfig } from '../gateway.config';
import type { RateLimitClass } from '../http/edge-route';

/** The per-account limits of each class, as configured. */
export function accountLimits(config: GatewayConfig): Record<RateLimitClass, RateLimit> {
  return {
    general: {
      perSecond: config.RATE_LIMIT_GENERAL_PER_SECOND,
      burst: config.RATE_LIMIT_GENERAL_BURST,
    },
    statistics: {
      perSecond: config.RATE_LIMIT_STATISTICS_PER_SECOND,
      burst: config.RATE_LIMIT_STATISTICS_BURST,
    },
  };
}
