import { InboundMessageRejected } from '@envoi/shared-inbound-mail';
import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { BatchRecorder, LateAttempts, type RetrySchedule } from '@envoi/shared-outbound';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import { RouteMatchEvents } from '../matching/route-match-events';
import { RoutesConfig } from '../routes.config';
import { RouteSecretCipher } from '../routes/route-secret';
import {
  DirectRouteAttempt,
  type DirectRouteCall,
  type EndedRouteCall,
  routeCallRecord,
} from './direct-route-attempt';
import { routeCallOutcome } from './route-call-outcome';
import { RouteCallPlaces } from './route-call-places';
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
 *
 * First attempts made straight from the stream (`attemptNow`, see RoutedMailIntake) share the
 * routes' places on this replica (RouteCallPlaces); their results go back to the intake, which
 * stores them.
 */
@Injectable()
export class RouteDeliveryWorker implements OnModuleDestroy {
  private readonly logger = new Logger(RouteDeliveryWorker.name);
  private readonly schedule: RetrySchedule;
  private readonly recorder: BatchRecorder<RouteCallRecord, true>;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly places: RouteCallPlaces;
  /** Withdrawals of the first attempts still waiting for a place, by call id. */
  private readonly waitingAttempts = new Map<string, () => boolean>();
  /** First attempts that outlasted their intake's wait and still run, by route. */
  private readonly lateCalls = new LateAttempts();
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
    this.places = new RouteCallPlaces(config.ROUTE_ENDPOINT_CONCURRENCY);
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

  /**
   * Makes the first attempts of planned calls now, each once its route has a place on this
   * replica. Each attempt ends with the call's result, or with null when `takeBack` takes it
   * back before its turn.
   */
  attemptNow(calls: readonly DirectRouteCall[]): DirectRouteAttempt[] {
    return calls.map((call) => {
      const attempt = new DirectRouteAttempt(call);
      if (this.stopping) {
        attempt.end(null);
        return attempt;
      }
      let started = false;
      const withdraw = this.places.waitFor(call.routeId, () => {
        started = true;
        this.waitingAttempts.delete(call.id);
        void this.post(call.id, call.route, call.payload, 1)
          .then(
            (ended) => attempt.end(ended),
            (error: unknown) => {
              this.logger.error(`route delivery ${call.id}: ${String(error)}`);
              attempt.end(null);
            },
          )
          .finally(() => this.places.release(call.routeId, true));
      });
      if (!started) this.waitingAttempts.set(call.id, withdraw);
      return attempt;
    });
  }

  /**
   * Whether a route's next first attempt may be made at once: not while one of its calls
   * outlasted its intake's wait (a slow or hanging URL then gets its mail through the database,
   * and holds up no intake).
   */
  takesDirect(routeId: string): boolean {
    return !this.lateCalls.has(routeId);
  }

  /**
   * Once the intake stops waiting: takes back the attempts still waiting for their turn (they
   * end unsent) and counts those still running as late until they end.
   */
  takeBack(attempts: readonly DirectRouteAttempt[]): void {
    for (const attempt of attempts) {
      const withdraw = this.waitingAttempts.get(attempt.call.id);
      this.waitingAttempts.delete(attempt.call.id);
      if (withdraw?.()) attempt.end(null);
      else if (attempt.outcome === undefined) this.lateCalls.add(attempt.call.routeId, attempt);
    }
  }

  /**
   * Records a first attempt stored leased (its call outlasted the intake's wait) once its call
   * ends; a call never made, or one whose record fails, is left to its lease and claimed again.
   */
  recordWhenEnded(attempt: DirectRouteAttempt): void {
    const recording = attempt.ended
      .then(async (ended) => {
        if (!ended) return;
        const recorded = await this.recorder.record(
          routeCallRecord(attempt.call.id, attempt.call.routeId, ended),
        );
        if (recorded === null) this.wake();
      })
      .catch((error: unknown) => {
        this.logger.error(`route delivery ${attempt.call.id}: ${String(error)}`);
      });
    this.inFlight.add(recording);
    void recording.finally(() => this.inFlight.delete(recording));
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
        directCalls: this.places.directCalls(),
      });
      for (const delivery of claimed) this.start(delivery);
      return result;
    } finally {
      this.reserved -= places;
    }
  }

  /** Makes a claimed call; once it ends without being recorded, claims again. */
  private start(delivery: ClaimedRouteDelivery): void {
    this.places.take(delivery.routeId);
    const call: Promise<void> = this.call(delivery)
      .finally(() => this.places.release(delivery.routeId, false))
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
      const body = delivery.payload ?? (await this.builtBody(delivery, route, new Date()));
      const ended = await this.post(delivery.id, route, body, delivery.attempt);
      const recorded = await this.recorder.record(
        routeCallRecord(delivery.id, delivery.routeId, ended),
      );
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

  /** POSTs a call's body: its `attempt`th call. */
  private async post(
    id: string,
    route: RouteCallTarget,
    body: string,
    attempt: number,
  ): Promise<EndedRouteCall> {
    const attemptedAt = new Date();
    const result = await this.caller.post(
      route.url,
      this.secrets.open(route),
      id,
      body,
      attemptedAt,
    );
    return {
      attemptedAt,
      outcome: routeCallOutcome(result, attempt, this.schedule, new Date()),
    };
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
