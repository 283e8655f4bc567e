import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { signedHeaders } from '@envoi/shared-outbound';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { WebhookSecretCipher } from '../webhooks/webhook-secret-cipher';
import { attemptOutcome } from './attempt-outcome';
import { type ClaimedDelivery, DeliveriesRepository } from './deliveries.repository';
import { type TransportResult, WebhookTransport } from './webhook-transport';

/** What a lease has beyond the call's timeout, to record its result. */
const LEASE_MARGIN_MS = 1_000;

/**
 * Sends the due deliveries. The periodic run claims what this replica has room for
 * (WEBHOOK_CONCURRENCY calls in flight, WEBHOOK_ENDPOINT_CONCURRENCY per endpoint over every
 * replica, endpoints served in turn) and starts the calls; while claims find work, each call that
 * ends claims again at once, so a busy endpoint is not held to one batch per interval. A call's
 * result is recorded under the delivery's lease; a replica that dies leaves its leased deliveries
 * to be claimed again once their leases end.
 */
@Injectable()
export class DeliveryWorker implements OnModuleDestroy {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly inFlight = new Set<Promise<void>>();
  /** The claim in progress: one at a time per replica. */
  private claiming: Promise<void> | undefined;
  /** Whether the last claim found work (then more may be due). */
  private moreDue = false;
  private stopping = false;

  constructor(
    private readonly config: WebhooksConfig,
    private readonly deliveries: DeliveriesRepository,
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

  private claim(): Promise<void> {
    this.claiming ??= this.claimAndSend().finally(() => {
      this.claiming = undefined;
    });
    return this.claiming;
  }

  private async claimAndSend(): Promise<void> {
    const room = this.config.WEBHOOK_CONCURRENCY - this.inFlight.size;
    if (this.stopping || room <= 0) return;
    const claimed = await this.deliveries.claimDue({
      perWebhook: this.config.WEBHOOK_ENDPOINT_CONCURRENCY,
      limit: room,
      // A lease shorter than a call would hand a call still in flight to another replica.
      leaseMs: Math.max(
        this.config.WEBHOOK_LEASE_MS,
        this.config.WEBHOOK_TIMEOUT_MS + LEASE_MARGIN_MS,
      ),
    });
    this.moreDue = claimed.length > 0;
    for (const delivery of claimed) this.track(this.send(delivery));
  }

  private track(call: Promise<void>): void {
    this.inFlight.add(call);
    void call.finally(() => {
      this.inFlight.delete(call);
      if (this.moreDue && !this.stopping) {
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
      const recorded = await this.deliveries.recordAttempt({
        deliveryId: delivery.id,
        leaseToken: delivery.leaseToken,
        attemptedAt,
        disableAfterFailures: this.config.WEBHOOK_DISABLE_AFTER_FAILURES,
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
