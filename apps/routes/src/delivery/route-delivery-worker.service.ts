import { InboundMessageRejected } from '@envoi/shared-inbound-mail';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import type { RetrySchedule } from '@envoi/shared-outbound';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import { RoutesConfig } from '../routes.config';
import { RouteSecretCipher } from '../routes/route-secret';
import { routeCallOutcome } from './route-call-outcome';
import { RouteCaller } from './route-caller';
import {
  type ClaimedRouteDelivery,
  RouteDeliveriesRepository,
} from './route-deliveries.repository';
import { routingPayload } from './routing-payload';

/**
 * Calls route URLs: every ROUTE_POLL_INTERVAL_MS a replica claims due deliveries for its free
 * places (ROUTE_CLAIM_BATCH calls in flight, ROUTE_ENDPOINT_CONCURRENCY per route over every
 * replica; leased, so a crashed replica's are called by another), POSTs each one's payload
 * without waiting for the others, and records the outcome with the route's counters (notes 2.8:
 * 10 retries, n^4 s ±10 % apart, the route disabled after ROUTE_DISABLE_AFTER_FAILURES failures
 * in a row). A message the inbound-mail library refuses (a MIME bomb) is given up with the
 * reason; its bytes stay for inspection until the retention purge.
 */
@Injectable()
export class RouteDeliveryWorker implements OnModuleDestroy {
  private readonly logger = new Logger(RouteDeliveryWorker.name);
  private readonly schedule: RetrySchedule;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly deliveries: RouteDeliveriesRepository,
    private readonly caller: RouteCaller,
    private readonly secrets: RouteSecretCipher,
    private readonly config: RoutesConfig,
  ) {
    this.schedule = { baseMs: config.ROUTE_RETRY_BASE_MS, maxAttempts: config.ROUTE_MAX_ATTEMPTS };
  }

  @PeriodicJob<RoutesConfig>({
    name: 'route-deliveries',
    intervalMs: (config) => config.ROUTE_POLL_INTERVAL_MS,
  })
  async callDue(run: JobRun): Promise<void> {
    const places = this.config.ROUTE_CLAIM_BATCH - this.inFlight.size;
    if (run.stopping || places <= 0) return;
    const claimed = await this.deliveries.claim(
      places,
      this.config.ROUTE_LEASE_MS,
      this.config.ROUTE_ENDPOINT_CONCURRENCY,
    );
    for (const delivery of claimed) {
      const call = this.call(delivery).finally(() => this.inFlight.delete(call));
      this.inFlight.add(call);
    }
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private async call(delivery: ClaimedRouteDelivery): Promise<void> {
    try {
      const target = await this.deliveries.callTarget(delivery);
      if (!target) {
        await this.deliveries.drop(delivery.id, 'the route was deleted or disabled');
        return;
      }
      const { route, raw } = target;
      const now = new Date();
      const payload = await routingPayload({ ...delivery, raw }, route, now);
      const result = await this.caller.post(
        route.url,
        this.secrets.open(route),
        delivery.id,
        payload,
        now,
      );
      const outcome = routeCallOutcome(result, delivery.attempt, this.schedule, new Date());
      await this.deliveries.record(delivery, outcome, this.config.ROUTE_DISABLE_AFTER_FAILURES);
    } catch (error) {
      if (error instanceof InboundMessageRejected) {
        await this.refuse(delivery, error);
        return;
      }
      // The lease lapses and another claim makes the call again.
      this.logger.error(`route delivery ${delivery.id}: ${String(error)}`);
    }
  }

  private async refuse(
    delivery: ClaimedRouteDelivery,
    error: InboundMessageRejected,
  ): Promise<void> {
    this.logger.warn(`route delivery ${delivery.id}: message refused: ${error.message}`);
    await this.deliveries
      .drop(delivery.id, `message refused (${error.reason}): ${error.message}`)
      .catch((dropError: unknown) => {
        this.logger.error(`route delivery ${delivery.id}: ${String(dropError)}`);
      });
  }
}
