import { PeriodicJobsModule } from '@envoi/shared-jobs';
import { NatsModule } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';

import { ApiKeyCredentials } from './auth/api-key-credentials.service';
import { Authenticator } from './auth/authenticator.service';
import { KeyUsageRecorder } from './auth/key-usage-recorder.service';
import { assertRouteScopes } from './auth/route-scopes';
import { ScopesGuard } from './auth/scopes.guard';
import { GATEWAY_CONTROLLERS } from './controllers';
import { GatewayDatabase } from './database/gateway-database';
import { HealthRepository } from './database/health.repository';
import { HttpErrorsFilter } from './errors/http-errors.filter';
import { GatewayConfig } from './gateway.config';
import { MessageContents, SendPayloads } from './http/uploads';
import { IdempotencyHooks } from './idempotency/idempotency.hooks';
import { IdempotencyRepository } from './idempotency/idempotency.repository';
import { IdempotencyPurger } from './idempotency/idempotency-purger.service';
import { IdempotencyStore } from './idempotency/idempotency-store';
import { LOGGER } from './logger.provider';
import { CursorCodec } from './pagination/cursor-codec';
import { RateLimiter } from './rate-limit/rate-limiter.service';
import { ReplicaRateLimits } from './rate-limit/replica-rate-limits.service';
import { declaredRoutes } from './routes';
import { StreamListeners } from './stream/stream-listeners';

@Module({})
export class AppModule {
  static register(config: GatewayConfig, logger: Logger): DynamicModule {
    assertRouteScopes(declaredRoutes(GATEWAY_CONTROLLERS));
    return {
      module: AppModule,
      imports: [
        NatsModule.forRoot({
          servers: config.natsServers(),
          name: 'gateway',
          rpcTimeoutMs: config.RPC_TIMEOUT_MS,
        }),
        PeriodicJobsModule.forRoot({ settings: GatewayConfig }),
      ],
      controllers: [...GATEWAY_CONTROLLERS],
      providers: [
        { provide: GatewayConfig, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: CursorCodec, useValue: new CursorCodec(config.CURSOR_SECRET) },
        ApiKeyCredentials,
        KeyUsageRecorder,
        Authenticator,
        GatewayDatabase,
        HealthRepository,
        IdempotencyRepository,
        IdempotencyStore,
        IdempotencyHooks,
        IdempotencyPurger,
        ReplicaRateLimits,
        RateLimiter,
        SendPayloads,
        MessageContents,
        StreamListeners,
        { provide: APP_GUARD, useClass: ScopesGuard },
        { provide: APP_FILTER, useFactory: () => new HttpErrorsFilter(logger) },
      ],
    };
  }
}
