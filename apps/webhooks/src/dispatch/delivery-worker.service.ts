import { type JobRun, PeriodicJob } from '@envoi/shared-jobs';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import { attemptOutcome } from './attempt-outcome';
import { type ClaimedDelivery, DeliveriesRepository } from './deliveries.repository';
import { WebhookSecrets } from './webhook-secrets';
import { signedHeaders } from './webhook-signature';
import { type TransportResult, WebhookTransport } from './webhook-transport';

/** Claim rounds one run makes at most while every claim comes back full. */
const MAX_ROUNDS_PER_RUN = 100;

/**
 * Sends the due deliveries: each run claims what this replica has room for (WEBHOOK_CONCURRENCY
 * calls in flight, WEBHOOK_ENDPOINT_CONCURRENCY per endpoint over every replica, endpoints
 * served in turn), starts the calls and, while claims come back full, claims again as calls end.
 * A call's result is recorded with the delivery's lease; a replica that dies leaves its leased
 * deliveries to be claimed again once their leases end.
 */
@Injectable()
export class DeliveryWorker implements OnModuleDestroy {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly config: WebhooksConfig,
    private readonly deliveries: DeliveriesRepository,
    private readonly secrets: WebhookSecrets,
    private readonly transport: WebhookTransport,
  ) {}

  @PeriodicJob<WebhooksConfig>({
    name: 'webhook-deliveries',
    intervalMs: (config) => config.WEBHOOK_POLL_INTERVAL_MS,
  })
  async sendDue(run: JobRun): Promise<void> {
    for (let round = 0; round < MAX_ROUNDS_PER_RUN && !run.stopping; round++) {
      const room = this.config.WEBHOOK_CONCURRENCY - this.inFlight.size;
      const claimed = await this.deliveries.claimDue({
        perWebhook: this.config.WEBHOOK_ENDPOINT_CONCURRENCY,
        limit: room,
        leaseMs: this.config.WEBHOOK_LEASE_MS,
      });
      for (const delivery of claimed) this.track(this.send(delivery));
      if (room <= 0 || claimed.length < room) return;
      await Promise.race(this.inFlight);
    }
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }

  private track(call: Promise<void>): void {
    this.inFlight.add(call);
    void call.finally(() => this.inFlight.delete(call));
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
      secret = this.secrets.open(delivery.secretCiphertext, delivery.webhookId);
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
