import type { StreamSubject } from '@envoi/contracts-core';
import { ComplaintStreamSubjects, DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import {
  type DecodedEvents,
  logLeftOutEvents,
  StreamBatchConsumer,
  type StreamItem,
} from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import { AutomaticSuppressionsService } from './automatic-suppressions.service';
import { toComplaintDecision } from './complaint-outcome';
import {
  suppressesNothing,
  type SuppressionDecision,
  toSuppressionDecisions,
} from './delivery-outcome';

/**
 * The durable consumers every replica of this service shares: one per subject (nats-server 2.9
 * gives a consumer a single filter subject).
 */
export const SUPPRESSING_EVENT_DURABLES: ReadonlyArray<[string, StreamSubject<unknown>]> = [
  ['suppressions-message-bounced', DeliveryStreamSubjects.bounced],
  ['suppressions-message-failed', DeliveryStreamSubjects.failed],
  // A conversation message's recipients can bounce or fail while another is delivered or deferred.
  ['suppressions-message-delivered', DeliveryStreamSubjects.delivered],
  ['suppressions-message-transient-error', DeliveryStreamSubjects.transientError],
  // The events of attempts recorded together, of any of the types above (or suppressed).
  ['suppressions-message-outcome-batch', DeliveryStreamSubjects.outcomeBatch],
];

/**
 * Handles the delivery events of the EVENTS stream that can carry a recipient's bounce or
 * failure: hard bounces and permanent failures suppress that recipient for the sending domain.
 * The events that arrived together (up to EVENTS_BATCH) are handled in one transaction; should a
 * batch fail, each event comes back on its own (a malformed one becomes a dead letter alone).
 * A stream message may carry several events (a `message.outcome_batch`; one of them no retry can
 * help is logged and left out). One whose payload names no bounced or failed recipient
 * (suppressesNothing: most of them) is acknowledged unread.
 */
@Injectable()
export class DeliveryEventsController {
  private readonly logger = new Logger(DeliveryEventsController.name);

  constructor(private readonly automatic: AutomaticSuppressionsService) {}

  @StreamBatchConsumer({
    durables: Object.fromEntries(SUPPRESSING_EVENT_DURABLES),
    decode: toSuppressionDecisions,
    ignores: suppressesNothing,
  })
  async handle(
    items: ReadonlyArray<StreamItem<DecodedEvents<SuppressionDecision>>>,
  ): Promise<void> {
    logLeftOutEvents(items, this.logger);
    await this.automatic.handle(
      items.flatMap(({ event: decoded, delivery }) =>
        decoded.events.map((event) => ({ event, delivery })),
      ),
    );
  }

  /** Complaints (ARF reports matched to their message): the recipient is suppressed alike. */
  @StreamBatchConsumer({
    durables: { 'suppressions-message-complaint': ComplaintStreamSubjects.complaint },
    decode: toComplaintDecision,
  })
  async complaints(items: ReadonlyArray<StreamItem<SuppressionDecision>>): Promise<void> {
    await this.automatic.handle(items);
  }
}
