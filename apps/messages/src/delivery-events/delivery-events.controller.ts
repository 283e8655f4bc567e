import type { StreamSubject } from '@envoi/contracts-core';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import {
  type DecodedEvents,
  logLeftOutEvents,
  StreamBatchConsumer,
  type StreamItem,
} from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import { DeliveryEventsService } from './delivery-events.service';
import { type DeliveryOutcome, toDeliveryOutcomes } from './delivery-outcome';

/**
 * One durable consumer per delivery event subject, each shared by every replica of this service.
 * nats-server 2.9 gives a consumer a single filter subject, and `events.message.>` would also
 * carry `message.reception` (and the opens and clicks to come), so each subject gets its own.
 * Consumers (and replicas) interleave freely: the status machine needs no order.
 */
export const DELIVERY_EVENT_DURABLES: ReadonlyArray<[string, StreamSubject<unknown>]> = [
  ['messages-message-delivered', DeliveryStreamSubjects.delivered],
  ['messages-message-transient-error', DeliveryStreamSubjects.transientError],
  ['messages-message-failed', DeliveryStreamSubjects.failed],
  ['messages-message-bounced', DeliveryStreamSubjects.bounced],
  ['messages-message-suppressed', DeliveryStreamSubjects.suppressed],
  ['messages-message-outcome-batch', DeliveryStreamSubjects.outcomeBatch],
];

/**
 * Feeds the status machine from the delivery events of the EVENTS stream: each event validated,
 * applied once, the events that arrived together (up to EVENTS_BATCH stream messages, each one
 * event or a batch of them) in one transaction.
 */
@Injectable()
export class DeliveryEventsController {
  private readonly logger = new Logger(DeliveryEventsController.name);

  constructor(private readonly events: DeliveryEventsService) {}

  /**
   * A lone event takes the batch's statements too (fixed, prepared, the delivery columns only).
   * Should a batch fail (an unprocessable event, a database error one event causes), each event
   * comes back on its own. An event of a batch no retry can help is logged and left out.
   */
  @StreamBatchConsumer({
    durables: Object.fromEntries(DELIVERY_EVENT_DURABLES),
    decode: toDeliveryOutcomes,
  })
  async apply(items: ReadonlyArray<StreamItem<DecodedEvents<DeliveryOutcome>>>): Promise<void> {
    logLeftOutEvents(items, this.logger);
    await this.events.applyBatch(items.flatMap(({ event }) => event.events));
  }
}
