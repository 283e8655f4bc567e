import { InboundMessageRejected } from '@envoi/shared-inbound-mail';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { BatchRecorder, type RetrySchedule } from '@envoi/shared-outbound';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import { RouteMatchEvents } from '../matching/route-match-events';
import { RoutesConfig } from '../routes.config';
import { RouteSecretCipher } from '../routes/route-secret';
import { routeCallOutcome } from './route-call-outcome';
import { RouteCaller } from './route-caller';
import {
  type ClaimedRouteDelivery,
  type ClaimLimits,
  type RouteCallRecord,
  type RouteCallTarget,
  RouteDeliveriesRepository,
} from './route-deliveries.repository';
import { routingPayload } from './routing-payload';

/** Calls recorded by one transaction at most. */
const RECORD_BATCH_MAX = 128;

/**
 * Calls route URLs: every ROUTE_POLL_INTERVAL_MS, when new mail was planned and whenever calls
 * end, a replica claims due deliveries for its free places (ROUTE_CLAIM_BATCH calls in flight,
 * ROUTE_ENDPOINT_CONCURRENCY per route over every replica; leased, so a crashed replica's are
 * called by another), POSTs each one's body (built at intake) without waiting for the others,
 * and records the outcomes of the calls that end together with their routes' counters in one
 * transaction, which also claims the next calls for the places they leave (notes 2.8:
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
  /** Places of claims in progress (a claim, or the one after a batch of calls is recorded). */
  private reserved = 0;
  private stopping = false;

  constructor(
    private readonly deliveries: RouteDeliveriesRepository,
    private readonly caller: RouteCaller,
    private readonly secrets: RouteSecretCipher,
    private readonly config: RoutesConfig,
    private readonly matchEvents: RouteMatchEvents,
  ) {
    this.schedule = { baseMs: config.ROUTE_RETRY_BASE_MS, maxAttempts: config.ROUTE_MAX_ATTEMPTS };
    this.recorder = new BatchRecorder({
      windowMs: config.ROUTE_RECORD_WINDOW_MS,
      maxBatch: RECORD_BATCH_MAX,
      keyOf: (record) => record.deliveryId,
      recordBatch: (records) => this.recordAndClaimNext(records),
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
    const places = this.freePlaces(0);
    if (places === 0) return;
    await this.leasing(places, async (limits) => {
      const claimed = await this.deliveries.claim(limits);
      return { claimed, result: undefined };
    });
  }

  /** Records calls that ended and, in the same transaction, claims for the places they leave. */
  private recordAndClaimNext(records: readonly RouteCallRecord[]): Promise<Map<string, true>> {
    return this.leasing(this.freePlaces(records.length), async (limits) => {
      const { recorded, claimed, disabledDomains } = await this.deliveries.recordCalls(
        records,
        this.config.ROUTE_DISABLE_AFTER_FAILURES,
        limits,
      );
      if (disabledDomains.length > 0) this.matchEvents.changed(disabledDomains);
      return { claimed, result: recorded };
    });
  }

  /**
   * This replica's places for new calls: ROUTE_CLAIM_BATCH less its calls in flight (but `ending`
   * of them, being recorded) and less the places of the claims in progress.
   */
  private freePlaces(ending: number): number {
    if (this.stopping) return 0;
    const taken = this.inFlight.size - ending + this.reserved;
    return Math.max(0, this.config.ROUTE_CLAIM_BATCH - taken);
  }

  /** Runs a claim of `places` (held meanwhile), then starts each call claimed. */
  private async leasing<T>(
    places: number,
    claim: (limits: ClaimLimits) => Promise<{ claimed: ClaimedRouteDelivery[]; result: T }>,
  ): Promise<T> {
    this.reserved += places;
    try {
      const { claimed, result } = await claim({
        limit: places,
        leaseMs: this.config.ROUTE_LEASE_MS,
        perRoute: this.config.ROUTE_ENDPOINT_CONCURRENCY,
      });
      for (const delivery of claimed) this.start(delivery);
      return result;
    } finally {
      this.reserved -= places;
    }
  }

  /** Makes a claimed call; once it ends without being recorded, claims again. */
  private start(delivery: ClaimedRouteDelivery): void {
    const call: Promise<void> = this.call(delivery)
      .catch((error: unknown) => {
        this.logger.error(`route delivery ${delivery.id}: ${String(error)}`);
        return false;
      })
      .then((recorded) => {
        this.inFlight.delete(call);
        if (!recorded) this.wake();
      });
    this.inFlight.add(call);
  }

  /** Makes a call; answers whether its outcome was recorded (the next claim made with it). */
  private async call(delivery: ClaimedRouteDelivery): Promise<boolean> {
    try {
      const { route } = delivery;
      if (!route) {
        await this.deliveries.drop(delivery.id, 'the route was deleted or disabled');
        return false;
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
      const recorded = await this.recorder.record({
        ...outcome,
        deliveryId: delivery.id,
        routeId: delivery.routeId,
        attemptedAt: now,
      });
      return recorded !== null;
    } catch (error) {
      if (error instanceof InboundMessageRejected) {
        await this.refuse(delivery, error);
        return false;
      }
      // The lease lapses and another claim makes the call again.
      this.logger.error(`route delivery ${delivery.id}: ${String(error)}`);
      return false;
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
