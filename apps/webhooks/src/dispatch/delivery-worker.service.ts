import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { signedHeaders } from '@envoi/shared-outbound';
import { OpenedSecrets } from '@envoi/shared-secrets';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { WebhookSecretCipher } from '../webhooks/webhook-secret-cipher';
import { WebhookSubscriptions } from '../webhooks/webhook-subscriptions.service';
import { attemptOutcome } from './attempt-outcome';
import { AttemptRecorder } from './attempt-recorder.service';
import {
  type ClaimedDelivery,
  type ClaimLimits,
  DeliveriesRepository,
  type RecordedAttempt,
} from './deliveries.repository';
import { DirectAttempt, type DirectDelivery, type EndedCall } from './direct-attempt';
import { EndpointQueues } from './endpoint-queues';
import { type TransportResult, WebhookTransport } from './webhook-transport';

/** What a lease has beyond the call's timeout, to record its result. */
const LEASE_MARGIN_MS = 1_000;

/**
 * Deliveries leased ahead of the calls, per call allowed: a call that ends starts the next one
 * to its endpoint at once, while claims and records go to the database in the background. Only
 * when a lease outlasts a wait for a whole call and the call itself (else 1: no waiting).
 */
export const LEASES_PER_CALL = 4;

/** How long a delivery may wait for its call before its lease would run out during the call. */
export function leaseWaitMs(leaseMs: number, timeoutMs: number): number {
  return leaseMs - timeoutMs - LEASE_MARGIN_MS;
}

/**
 * Sends the due deliveries. A replica leases deliveries ahead of its calls (LEASES_PER_CALL per
 * call allowed: WEBHOOK_CONCURRENCY calls in flight, WEBHOOK_ENDPOINT_CONCURRENCY per endpoint,
 * 1 while the endpoint's calls fail) and calls them from its EndpointQueues, endpoints in turn; an
 * endpoint's deliveries are leased by one replica at a time (see the claim), so its calls are
 * bounded over every replica. The periodic run claims, and so does every recorded attempt (after
 * the claim in progress, if any). Deliveries the fan-out leases as it writes them come straight
 * here (`sendLeasedBy`), without a claim. A call's result is recorded under the delivery's lease,
 * in batches (AttemptRecorder); a replica that dies leaves its leased deliveries to be claimed
 * again once their leases end, one that stops gives back those it has not called.
 *
 * First attempts made straight from the stream (`attemptNow`, see DirectFanOut) share the same
 * queues and limits; their results go back to the fan-out, which stores them.
 */
@Injectable()
export class DeliveryWorker implements OnModuleDestroy {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly inFlight = new Set<Promise<void>>();
  /** First attempts not ended yet, by delivery id. */
  private readonly directs = new Map<string, DirectAttempt>();
  /** Whether each endpoint's last call from this replica succeeded. */
  private readonly lastCallSucceeded = new Map<string, boolean>();
  /** Leases being taken by fan-out INSERTs for this replica (sendLeasedBy). */
  private readonly leasing = new Set<Promise<ClaimedDelivery[]>>();
  private readonly queues: EndpointQueues;
  private readonly secrets: OpenedSecrets;
  /** The claim in progress: one at a time per replica. */
  private claiming: Promise<void> | undefined;
  /** An attempt was recorded while the claim was in progress: claim again after it. */
  private claimAgain = false;
  /** Attempts recorded together (one batch) ask for one claim, made once they have all settled. */
  private claimAsked = false;
  /** Leases promised to deliveries being leased by the fan-out. */
  private reserved = 0;
  private stopping = false;

  constructor(
    private readonly config: WebhooksConfig,
    private readonly deliveries: DeliveriesRepository,
    private readonly recorder: AttemptRecorder,
    cipher: WebhookSecretCipher,
    private readonly transport: WebhookTransport,
    private readonly subscriptions: WebhookSubscriptions,
  ) {
    this.secrets = new OpenedSecrets((id, secretCiphertext) =>
      cipher.open({ id, secretCiphertext }),
    );
    this.queues = new EndpointQueues({
      perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY,
      calls: config.WEBHOOK_CONCURRENCY,
    });
  }

  @PeriodicJob<WebhooksConfig>({
    name: 'webhook-deliveries',
    intervalMs: (config) => config.WEBHOOK_POLL_INTERVAL_MS,
  })
  async sendDue(run: JobRun): Promise<void> {
    if (!run.stopping) await this.claim();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await this.claiming?.catch(() => undefined);
    // A fan-out's INSERT may be leasing for this replica right now: what it leases is queued
    // (never called once stopping) and given back with the rest.
    await Promise.allSettled([...this.leasing]);
    const drained = this.queues.drain();
    await this.deliveries
      .releaseLeases(drained.filter((delivery) => !this.directs.has(delivery.id)))
      .catch((error: unknown) => {
        this.logger.warn(`giving back leased deliveries failed: ${String(error)}`);
      });
    // Never called: their fan-out stores them due.
    for (const delivery of drained) this.endDirect(delivery.id, null);
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Makes the deliveries' first attempts, not stored yet, within the endpoints' limits (each after
   * those already waiting for its endpoint).
   */
  attemptNow(deliveries: readonly DirectDelivery[]): DirectAttempt[] {
    const attempts = deliveries.map((delivery) => new DirectAttempt(delivery));
    if (this.stopping) {
      for (const attempt of attempts) attempt.end(null);
      return attempts;
    }
    for (const attempt of attempts) {
      this.directs.set(attempt.delivery.id, attempt);
      // Not leased: nothing runs out while it waits.
      this.queues.add(attempt.queued(), Number.POSITIVE_INFINITY);
    }
    this.startCalls();
    return attempts;
  }

  /** Takes back the attempts still waiting for their turn: they end unsent. */
  takeBack(attempts: readonly DirectAttempt[]): void {
    const ids = new Set(attempts.map((attempt) => attempt.delivery.id));
    for (const delivery of this.queues.withdraw(ids)) this.endDirect(delivery.id, null);
  }

  /**
   * Records the attempt under the lease its delivery was stored with, once its call ends (nothing
   * when it is never called: the lease runs out and the delivery is claimed).
   */
  recordWhenEnded(attempt: DirectAttempt, leaseToken: string): void {
    const recording = attempt.ended.then(async (ended) => {
      if (!ended) return;
      await this.record(attempt.delivery.id, attempt.delivery.webhookId, leaseToken, ended);
      this.claimAfterRecords();
    });
    this.inFlight.add(recording);
    void recording.finally(() => this.inFlight.delete(recording));
  }

  /** The endpoint's calls fail: its last one from this replica did, or else `stored` says so. */
  isFailing(webhookId: string, stored: boolean): boolean {
    const succeeded = this.lastCallSucceeded.get(webhookId);
    return succeeded === undefined ? stored : !succeeded;
  }

  /** A stored attempt disabled its webhook: no more events go to it. */
  noteRecorded(webhookId: string, recorded: RecordedAttempt | undefined): void {
    if (!recorded || recorded.webhookEnabled) return;
    this.logger.warn(`webhook ${webhookId} disabled`);
    this.subscriptions.changed([recorded.accountId]);
  }

  private endDirect(deliveryId: string, ended: EndedCall | null): boolean {
    const attempt = this.directs.get(deliveryId);
    if (!attempt) return false;
    this.directs.delete(deliveryId);
    attempt.end(ended);
    return true;
  }

  /**
   * Lets `lease` lease up to `count` deliveries for this replica (no more than it has room for)
   * and sends those it answers.
   */
  async sendLeasedBy(
    count: number,
    lease: (limits: ClaimLimits) => Promise<ClaimedDelivery[]>,
  ): Promise<void> {
    const places = this.stopping ? 0 : Math.max(0, Math.min(count, this.room()));
    this.reserved += places;
    const leasing = lease(this.limits(places));
    this.leasing.add(leasing);
    try {
      this.enqueue(await leasing);
    } finally {
      this.leasing.delete(leasing);
      this.reserved -= places;
    }
  }

  private room(): number {
    return (
      this.config.WEBHOOK_CONCURRENCY * this.leasesPerCall() - this.queues.leases() - this.reserved
    );
  }

  private leasesPerCall(): number {
    const waitMs = leaseWaitMs(this.leaseMs(), this.config.WEBHOOK_TIMEOUT_MS);
    return waitMs >= this.config.WEBHOOK_TIMEOUT_MS ? LEASES_PER_CALL : 1;
  }

  /** How long a delivery leased to this replica stays its own. */
  leaseMs(): number {
    // A lease shorter than a call would hand a call still in flight to another replica.
    return Math.max(this.config.WEBHOOK_LEASE_MS, this.config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS);
  }

  private limits(limit: number): ClaimLimits {
    return {
      perWebhook: this.config.WEBHOOK_ENDPOINT_CONCURRENCY * this.leasesPerCall(),
      held: this.queues.held(),
      limit,
      leaseMs: this.leaseMs(),
    };
  }

  private claim(): Promise<void> {
    if (this.claiming) {
      this.claimAgain = true;
      return this.claiming;
    }
    this.claiming = this.claimWhileAsked().finally(() => {
      this.claiming = undefined;
    });
    return this.claiming;
  }

  private async claimWhileAsked(): Promise<void> {
    do {
      this.claimAgain = false;
      const room = this.room();
      if (this.stopping || room <= 0) return;
      this.enqueue(await this.deliveries.claimDue(this.limits(room)));
    } while (this.claimAgain && !this.stopping);
  }

  /** Queues leased deliveries, each to be called while its lease still covers a whole call. */
  private enqueue(leased: readonly ClaimedDelivery[]): void {
    const startBy = Date.now() + this.leaseMs() - this.config.WEBHOOK_TIMEOUT_MS - LEASE_MARGIN_MS;
    for (const delivery of leased) this.queues.add(delivery, startBy);
    this.startCalls();
  }

  private startCalls(): void {
    if (this.stopping) return;
    const { start, dropped } = this.queues.next(Date.now());
    for (const delivery of dropped) this.endDirect(delivery.id, null);
    for (const delivery of start) {
      const call = this.send(delivery);
      this.inFlight.add(call);
      void call.finally(() => this.inFlight.delete(call));
    }
  }

  /** Calls, then records the attempt: the lease is given up once it is recorded (or not). */
  private async send(delivery: ClaimedDelivery): Promise<void> {
    const attempt = delivery.attempts + 1;
    const attemptedAt = new Date();
    const result = await this.call(delivery, attemptedAt);
    const outcome = attemptOutcome(
      result,
      attempt,
      {
        baseMs: this.config.WEBHOOK_RETRY_BASE_MS,
        maxAttempts: this.config.WEBHOOK_MAX_ATTEMPTS,
      },
      new Date(),
    );
    this.queues.callEnded(delivery.webhookId, outcome.succeeded);
    this.lastCallSucceeded.set(delivery.webhookId, outcome.succeeded);
    this.startCalls();
    if (this.directs.has(delivery.id)) {
      // A first attempt: its fan-out stores it.
      this.queues.settled(delivery.webhookId);
      this.endDirect(delivery.id, { outcome, attemptedAt });
      return;
    }
    try {
      await this.record(delivery.id, delivery.webhookId, delivery.leaseToken, {
        outcome,
        attemptedAt,
      });
    } finally {
      this.queues.settled(delivery.webhookId);
    }
    this.claimAfterRecords();
  }

  /** Records an attempt under its delivery's lease (logged when it cannot be). */
  private async record(
    deliveryId: string,
    webhookId: string,
    leaseToken: string,
    { outcome, attemptedAt }: EndedCall,
  ): Promise<void> {
    try {
      const recorded = await this.recorder.record({
        deliveryId,
        leaseToken,
        attemptedAt,
        ...outcome,
      });
      if (!outcome.succeeded) this.noteRecorded(webhookId, recorded ?? undefined);
    } catch (error) {
      // The lease runs out and the delivery is claimed again: nothing is lost.
      this.logger.warn(`delivery ${deliveryId}: the attempt was not recorded: ${String(error)}`);
    }
  }

  /**
   * Claims once the attempts recorded in the same batch have all given their places back: their
   * continuations run one after the other in this turn, and the claim starts after the last.
   */
  claimAfterRecords(): void {
    if (this.stopping || this.claimAsked) return;
    this.claimAsked = true;
    queueMicrotask(() => {
      this.claimAsked = false;
      if (this.stopping) return;
      this.claim().catch((error: unknown) => {
        this.logger.warn(`claiming due deliveries failed: ${String(error)}`);
      });
    });
  }

  private call(delivery: ClaimedDelivery, attemptedAt: Date): Promise<TransportResult> {
    let secret: string;
    try {
      secret = this.secrets.open(delivery.webhookId, delivery.secretCiphertext);
    } catch {
      return Promise.resolve({ error: 'the signing secret cannot be read', durationMs: 0 });
    }
    const headers = signedHeaders(
      secret,
      delivery.eventId,
      Math.floor(attemptedAt.getTime() / 1000),
      delivery.body,
    );
    return this.transport.post(
      delivery.url,
      headers,
      delivery.body,
      this.config.WEBHOOK_TIMEOUT_MS,
    );
  }
}
