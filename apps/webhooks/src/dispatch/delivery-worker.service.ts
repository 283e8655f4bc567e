import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { WebhookSecretCipher } from '../webhooks/webhook-secret-cipher';
import { attemptOutcome } from './attempt-outcome';
import { AttemptRecorder } from './attempt-recorder.service';
import {
  type ClaimedDelivery,
  type ClaimLimits,
  DeliveriesRepository,
} from './deliveries.repository';
import { signedHeaders } from './webhook-signature';
import { type TransportResult, WebhookTransport } from './webhook-transport';

/** What a lease has beyond the call's timeout, to record its result. */
const LEASE_MARGIN_MS = 1_000;

/**
 * Sends the due deliveries. The periodic run claims what this replica has room for
 * (WEBHOOK_CONCURRENCY calls in flight, WEBHOOK_ENDPOINT_CONCURRENCY per endpoint over every
 * replica, endpoints served in turn) and starts the calls; each call that ends claims again at
 * once (after the claim in progress, if any: calls that end meanwhile share one), so a busy
 * endpoint is not held to one batch per interval. Deliveries the fan-out leases as it writes them come straight here
 * (`sendLeasedBy`), without a claim. A call's result is recorded under the delivery's lease, in
 * batches (AttemptRecorder); a replica that dies leaves its leased deliveries to be claimed again
 * once their leases end.
 */
@Injectable()
export class DeliveryWorker implements OnModuleDestroy {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly inFlight = new Set<Promise<void>>();
  /** The claim in progress: one at a time per replica. */
  private claiming: Promise<void> | undefined;
  /** A call ended while the claim was in progress: claim again after it. */
  private claimAgain = false;
  /** Places promised to deliveries being leased by the fan-out. */
  private reserved = 0;
  private stopping = false;

  constructor(
    private readonly config: WebhooksConfig,
    private readonly deliveries: DeliveriesRepository,
    private readonly recorder: AttemptRecorder,
    private readonly secrets: WebhookSecretCipher,
    private readonly transport: WebhookTransport,
  ) {}

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
    await Promise.allSettled([...this.inFlight]);
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
    try {
      const leased = await lease(this.limits(places));
      for (const delivery of leased) this.track(this.send(delivery));
    } finally {
      this.reserved -= places;
    }
  }

  private room(): number {
    return this.config.WEBHOOK_CONCURRENCY - this.inFlight.size - this.reserved;
  }

  private limits(limit: number): ClaimLimits {
    return {
      perWebhook: this.config.WEBHOOK_ENDPOINT_CONCURRENCY,
      limit,
      // A lease shorter than a call would hand a call still in flight to another replica.
      leaseMs: Math.max(
        this.config.WEBHOOK_LEASE_MS,
        this.config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS,
      ),
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
      await this.claimAndSend();
    } while (this.claimAgain && !this.stopping);
  }

  private async claimAndSend(): Promise<void> {
    const room = this.room();
    if (this.stopping || room <= 0) return;
    const claimed = await this.deliveries.claimDue(this.limits(room));
    for (const delivery of claimed) this.track(this.send(delivery));
  }

  private track(call: Promise<void>): void {
    this.inFlight.add(call);
    void call.finally(() => {
      this.inFlight.delete(call);
      if (!this.stopping) {
        this.claim().catch((error: unknown) => {
          this.logger.warn(`claiming due deliveries failed: ${String(error)}`);
        });
      }
    });
  }

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
    try {
      const recorded = await this.recorder.record({
        deliveryId: delivery.id,
        leaseToken: delivery.leaseToken,
        attemptedAt,
        ...outcome,
      });
      if (recorded && !recorded.webhookEnabled && !outcome.succeeded) {
        this.logger.warn(`webhook ${delivery.webhookId} disabled after attempt ${attempt}`);
      }
    } catch (error) {
      // The lease runs out and the delivery is claimed again: nothing is lost.
      this.logger.warn(`delivery ${delivery.id}: the attempt was not recorded: ${String(error)}`);
    }
  }

  private async call(delivery: ClaimedDelivery, attemptedAt: Date): Promise<TransportResult> {
    let secret: string;
    try {
      secret = this.secrets.open({
        id: delivery.webhookId,
        secretCiphertext: delivery.secretCiphertext,
      });
    } catch {
      return { error: 'the signing secret cannot be read', durationMs: 0 };
    }
    const headers = signedHeaders(
      secret,
      delivery.eventId,
      Math.floor(attemptedAt.getTime() / 1000),
      delivery.body,
    );
    return this.transport.post(
      delivery.url,
      { ...headers },
      delivery.body,
      this.config.WEBHOOK_TIMEOUT_MS,
    );
  }
}
