import { InboundMessageRejected } from '@envoi/shared-inbound-mail';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { BatchRecorder, type RetrySchedule } from '@envoi/shared-outbound';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import { RoutesConfig } from '../routes.config';
import { RouteSecretCipher } from '../routes/route-secret';
import { routeCallOutcome } from './route-call-outcome';
import { RouteCaller } from './route-caller';
import {
  type ClaimedRouteDelivery,
  type RouteCallRecord,
  type RouteCallTarget,
  RouteDeliveriesRepository,
} from './route-deliveries.repository';
import { routingPayload } from './routing-payload';

/** Calls recorded by one transaction at most. */
const RECORD_BATCH_MAX = 128;

/**
 * Calls route URLs: every ROUTE_POLL_INTERVAL_MS, when new mail was planned and whenever a call
 * ends, a replica claims due deliveries for its free places (ROUTE_CLAIM_BATCH calls in flight, ROUTE_ENDPOINT_CONCURRENCY per route over every
 * replica; leased, so a crashed replica's are called by another), POSTs each one's payload
 * without waiting for the others (its body was built at intake), and records the outcome with
 * the route's counters, the calls that end together in one transaction (notes 2.8:
 * 10 retries, n^4 s ±10 % apart, the route disabled after ROUTE_DISABLE_AFTER_FAILURES failures
 * in a row). A message the inbound-mail library refuses (a MIME bomb) is given up with the
 * reason; its bytes stay for inspection until the retention purge.
 */
@Injectable()
export class RouteDeliveryWorker implements OnModuleDestroy {
  private readonly logger = new Logger(RouteDeliveryWorker.name);
  private readonly schedule: RetrySchedule;
  private readonly recorder: BatchRecorder<RouteCallRecord, true>;
  private readonly inFlight = new Set<Promise<void>>();
  /** The claim in progress: one at a time per replica. */
  private claiming: Promise<void> | undefined;
  /** A wake-up that came during a claim: claim again once it ends. */
  private claimAgain = false;
  private stopping = false;

  constructor(
    private readonly deliveries: RouteDeliveriesRepository,
    private readonly caller: RouteCaller,
    private readonly secrets: RouteSecretCipher,
    private readonly config: RoutesConfig,
  ) {
    this.schedule = { baseMs: config.ROUTE_RETRY_BASE_MS, maxAttempts: config.ROUTE_MAX_ATTEMPTS };
    this.recorder = new BatchRecorder({
      windowMs: config.ROUTE_RECORD_WINDOW_MS,
      maxBatch: RECORD_BATCH_MAX,
      keyOf: (record) => record.deliveryId,
      recordBatch: (records) =>
        deliveries.recordCalls(records, config.ROUTE_DISABLE_AFTER_FAILURES),
    });
  }

  @PeriodicJob<RoutesConfig>({
    name: 'route-deliveries',
    intervalMs: (config) => config.ROUTE_POLL_INTERVAL_MS,
  })
  async callDue(run: JobRun): Promise<void> {
    if (!run.stopping) await this.claim();
  }

  /** Claims now rather than at the next interval: new calls were planned, or one ended. */
  wake(): void {
    if (this.stopping) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claim().catch((error: unknown) => {
      this.logger.warn(`claiming due route calls failed: ${String(error)}`);
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await this.claiming?.catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
    await this.recorder.drain();
  }

  private claim(): Promise<void> {
    this.claiming ??= this.claimAndCall().finally(() => {
      this.claiming = undefined;
      if (this.claimAgain) {
        this.claimAgain = false;
        this.wake();
      }
    });
    return this.claiming;
  }

  private async claimAndCall(): Promise<void> {
    const places = this.config.ROUTE_CLAIM_BATCH - this.inFlight.size;
    if (this.stopping || places <= 0) return;
    const claimed = await this.deliveries.claim(
      places,
      this.config.ROUTE_LEASE_MS,
      this.config.ROUTE_ENDPOINT_CONCURRENCY,
    );
    for (const delivery of claimed) {
      const call = this.call(delivery).finally(() => {
        this.inFlight.delete(call);
        this.wake();
      });
      this.inFlight.add(call);
    }
  }

  private async call(delivery: ClaimedRouteDelivery): Promise<void> {
    try {
      const { route } = delivery;
      if (!route) {
        await this.deliveries.drop(delivery.id, 'the route was deleted or disabled');
        return;
      }
      const now = new Date();
      const body = delivery.payload ?? (await this.builtBody(delivery, route, now));
      const result = await this.caller.post(
        route.url,
        this.secrets.open(route),
        delivery.id,
        body,
        now,
      );
      const outcome = routeCallOutcome(result, delivery.attempt, this.schedule, new Date());
      await this.recorder.record({
        ...outcome,
        deliveryId: delivery.id,
        routeId: delivery.routeId,
        attemptedAt: now,
      });
    } catch (error) {
      if (error instanceof InboundMessageRejected) {
        await this.refuse(delivery, error);
        return;
      }
      // The lease lapses and another claim makes the call again.
      this.logger.error(`route delivery ${delivery.id}: ${String(error)}`);
    }
  }

  /** The body of a call planned before bodies were kept, built from the message's bytes. */
  private async builtBody(
    delivery: ClaimedRouteDelivery,
    route: RouteCallTarget,
    now: Date,
  ): Promise<string> {
    const raw = await this.deliveries.raw(delivery.inboundId);
    if (raw === null) throw new Error(`inbound ${delivery.inboundId} has gone`);
    return JSON.stringify(await routingPayload({ ...delivery, raw }, route, now));
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
