import { endedWithin, LateAttempts } from '@envoi/shared-outbound';
import { Injectable } from '@nestjs/common';

import { WebhooksConfig } from '../webhooks.config';
import type { SubscribedEndpoint } from '../webhooks/subscription-set';
import { DeliveriesRepository, type FirstAttempt } from './deliveries.repository';
import { DeliveryWorker } from './delivery-worker.service';
import type { DirectDelivery, EndedCall } from './direct-attempt';

/**
 * A first attempt's record. Its fields are listed rather than spread: V8 builds an object literal
 * that spreads two objects several µs slower, once per delivery.
 */
function firstAttempt(delivery: DirectDelivery, { attemptedAt, outcome }: EndedCall): FirstAttempt {
  return {
    id: delivery.id,
    webhookId: delivery.webhookId,
    accountId: delivery.accountId,
    eventId: delivery.eventId,
    eventType: delivery.eventType,
    body: delivery.body,
    attemptedAt,
    state: outcome.state,
    nextAttemptAt: outcome.nextAttemptAt,
    succeeded: outcome.succeeded,
    gone: outcome.gone,
    responseStatus: outcome.responseStatus,
    error: outcome.error,
    responseBody: outcome.responseBody,
    durationMs: outcome.durationMs,
  };
}

/**
 * First attempts straight from the stream: a batch's deliveries are called at once (within the
 * endpoints' limits, DeliveryWorker), then stored with their results in one transaction before
 * the batch is acknowledged. Calls still running after WEBHOOK_DIRECT_WAIT_MS are stored leased
 * (recorded when they end), those still waiting are stored due, for a claim; until those calls
 * end, and while its calls fail, an endpoint gets its events through the database. A crash
 * between a call and its record leaves the batch unacknowledged: JetStream hands it over again
 * and the endpoint may get the same webhook-id twice (at least once, as documented).
 */
@Injectable()
export class DirectFanOut {
  /** Calls per endpoint that outlasted their batch's wait and are still running. */
  private readonly lateCalls = new LateAttempts();

  constructor(
    private readonly config: WebhooksConfig,
    private readonly deliveries: DeliveriesRepository,
    private readonly worker: DeliveryWorker,
  ) {}

  /** Whether the endpoint's next first attempt may be made from the stream. */
  takes(endpoint: SubscribedEndpoint): boolean {
    return (
      !this.lateCalls.has(endpoint.webhookId) &&
      !this.worker.isFailing(endpoint.webhookId, endpoint.failing)
    );
  }

  async send(deliveries: readonly DirectDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const attempts = this.worker.attemptNow(deliveries);
    await endedWithin(attempts, this.config.WEBHOOK_DIRECT_WAIT_MS);
    this.worker.takeBack(attempts.filter((attempt) => attempt.outcome === undefined));
    const late = attempts.filter((attempt) => attempt.outcome === undefined);
    for (const attempt of late) this.lateCalls.add(attempt.delivery.webhookId, attempt);
    const attempted = attempts.flatMap((attempt): FirstAttempt[] => {
      const ended = attempt.outcome;
      return ended ? [firstAttempt(attempt.delivery, ended)] : [];
    });
    const stored = await this.deliveries.storeFanOut(
      {
        attempted,
        unsent: attempts
          .filter((attempt) => attempt.outcome === null)
          .map(({ delivery }) => delivery),
        leased: late.map(({ delivery }) => delivery),
        leaseMs: this.worker.leaseMs(),
      },
      this.config.WEBHOOK_DISABLE_AFTER_FAILURES,
    );
    for (const attempt of late) {
      const leaseToken = stored.leaseTokens.get(attempt.delivery.id);
      if (leaseToken) this.worker.recordWhenEnded(attempt, leaseToken);
    }
    for (const attempt of attempted) {
      if (!attempt.succeeded)
        this.worker.noteRecorded(attempt.webhookId, stored.recorded.get(attempt.id));
    }
    if (attempted.length < attempts.length || attempted.some((attempt) => !attempt.succeeded)) {
      this.worker.claimAfterRecords();
    }
  }
}
