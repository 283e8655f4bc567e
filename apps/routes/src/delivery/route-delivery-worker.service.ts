import type { MessageRoutingPayload } from '@envoi/contracts-routes';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import type { RetrySchedule } from '@envoi/shared-outbound';
import { Injectable, Logger } from '@nestjs/common';

import { RoutesConfig } from '../routes.config';
import { RouteSecretCipher } from '../routes/route-secret';
import { routingTimestamp } from '../routes/sample-routing';
import { routeCallOutcome } from './route-call-outcome';
import { RouteCaller } from './route-caller';
import {
  type ClaimedRouteDelivery,
  RouteDeliveriesRepository,
} from './route-deliveries.repository';
import { routingData } from './routing-data';

/**
 * Calls route URLs: every ROUTE_POLL_INTERVAL_MS a replica claims up to ROUTE_CLAIM_BATCH due
 * deliveries (leased, so a crashed replica's are called by another), POSTs each one's payload,
 * and records the outcome with the route's counters (notes 2.8: 10 retries, n^4 s ±10 % apart,
 * the route disabled after ROUTE_DISABLE_AFTER_FAILURES failures in a row).
 */
@Injectable()
export class RouteDeliveryWorker {
  private readonly logger = new Logger(RouteDeliveryWorker.name);
  private readonly schedule: RetrySchedule;

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
    if (run.stopping) return;
    const claimed = await this.deliveries.claim(
      this.config.ROUTE_CLAIM_BATCH,
      this.config.ROUTE_LEASE_MS,
    );
    await Promise.all(claimed.map((delivery) => this.call(delivery)));
  }

  private async call(delivery: ClaimedRouteDelivery): Promise<void> {
    try {
      const target = await this.deliveries.callTarget(delivery);
      if (!target) {
        await this.deliveries.drop(delivery.id, 'the route was deleted or disabled');
        return;
      }
      const { route, raw } = target;
      const data = await routingData(delivery.inboundId, raw, {
        attachments: route.attachments,
        headers: route.headers,
        strip_replies: route.stripReplies,
      });
      const now = new Date();
      const payload: MessageRoutingPayload = {
        type: 'message.routing',
        route_id: route.id,
        timestamp: routingTimestamp(now),
        data: delivery.recipients.length === 1 ? { ...data, to: delivery.recipients[0] } : data,
      };
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
      // The lease lapses and another claim makes the call again.
      this.logger.error(`route delivery ${delivery.id}: ${String(error)}`);
    }
  }
}
