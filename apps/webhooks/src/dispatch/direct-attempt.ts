import { FirstAttempt } from '@envoi/shared-outbound';

import type { AttemptOutcome } from './attempt-outcome';
import type { ClaimedDelivery, NewDelivery } from './deliveries.repository';

/** A call's result, for its record. */
export interface EndedCall {
  outcome: AttemptOutcome;
  attemptedAt: Date;
}

/** Where a first attempt goes, with what its call needs. */
export type DirectDelivery = NewDelivery & Pick<ClaimedDelivery, 'url' | 'secretCiphertext'>;

/** The first attempt of a delivery not stored yet, made straight from the stream (see FirstAttempt). */
export class DirectAttempt extends FirstAttempt<EndedCall> {
  constructor(readonly delivery: DirectDelivery) {
    super();
  }

  /**
   * The delivery as the endpoint queues hold it (not leased: no token). Fields listed rather than
   * spread: a spread followed by more fields is µs slower in V8, once per delivery.
   */
  queued(): ClaimedDelivery {
    const { delivery } = this;
    return {
      id: delivery.id,
      webhookId: delivery.webhookId,
      eventId: delivery.eventId,
      eventType: delivery.eventType,
      body: delivery.body,
      attempts: 0,
      leaseToken: '',
      url: delivery.url,
      secretCiphertext: delivery.secretCiphertext,
      webhookFailing: false,
    };
  }
}
