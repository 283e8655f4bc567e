import { randomUUID } from 'node:crypto';

import { ReplicatedRateLimiter } from '@envoi/shared-edge';
import { NATS_CONNECTION, RpcClient, subscribeBroadcast } from '@envoi/shared-nats';
import type { Logger } from '@envoi/shared-observability';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { NatsConnection, Subscription } from 'nats';

import { GatewayConfig } from '../gateway.config';
import type { RateLimitClass } from '../http/edge-route';
import { LOGGER } from '../logger.provider';
import { accountLimits } from './account-limits';
import {
  fromReportedEvent,
  limitsFingerprint,
  RATE_LIMIT_REPORTED,
  toReportedEvent,
} from './rate-limit-reported';

/** A replica silent for this many report intervals no longer counts. */
const PEER_EXPIRY_INTERVALS = 10;

/**
 * The per-account limits this replica holds with the other gateway replicas (RATE_LIMIT_MODE
 * `shared`): decided in memory, reconciled by a report on NATS core pub/sub every
 * RATE_LIMIT_SYNC_INTERVAL_MS. While NATS is unreachable the peers fall silent, and this replica
 * enforces the full limits on its own, as it does when it is the only one.
 */
@Injectable()
export class ReplicaRateLimits implements OnModuleInit, OnModuleDestroy {
  readonly limiter: ReplicatedRateLimiter<RateLimitClass>;
  private readonly limits: string;
  private subscription: Subscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private replicas = 1;

  constructor(
    private readonly config: GatewayConfig,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly rpc: RpcClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    const limits = accountLimits(config);
    this.limits = limitsFingerprint(limits);
    this.limiter = new ReplicatedRateLimiter({
      replicaId: randomUUID(),
      limits,
      reportIntervalMs: config.RATE_LIMIT_SYNC_INTERVAL_MS,
      peerExpiryMs: PEER_EXPIRY_INTERVALS * config.RATE_LIMIT_SYNC_INTERVAL_MS,
    });
  }

  onModuleInit(): void {
    if (this.config.RATE_LIMIT_MODE !== 'shared') return;
    this.subscription = subscribeBroadcast(
      this.connection,
      RATE_LIMIT_REPORTED,
      (event) => {
        if (event.limits !== this.limits) return;
        const report = fromReportedEvent(event);
        if (report) this.limiter.receive(report);
      },
      (error) => this.logger.warn({ err: error }, 'rate limit report failed'),
    );
    this.timer = setInterval(() => this.report(), this.config.RATE_LIMIT_SYNC_INTERVAL_MS);
    this.timer.unref();
    this.report();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
    this.subscription?.unsubscribe();
  }

  private report(): void {
    const report = this.limiter.report();
    try {
      this.rpc.emit(RATE_LIMIT_REPORTED, toReportedEvent(report, this.limits));
    } catch (error) {
      this.logger.warn({ err: error }, 'rate limit report not sent');
    }
    this.noteReplicaCount(this.limiter.replicaCount());
  }

  private noteReplicaCount(replicas: number): void {
    if (replicas === this.replicas) return;
    if (replicas === 1) {
      this.logger.warn(
        { replicas },
        'rate limit peers silent; this replica enforces the full limits on its own',
      );
    } else {
      this.logger.info({ replicas }, 'rate limits held by gateway replicas');
    }
    this.replicas = replicas;
  }
}
