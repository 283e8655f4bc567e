import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { StreamBatchConsumer, type StreamItem } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { type CountedReception, toCountedReception } from './counted-reception';
import { ReceptionCountsRepository } from './reception-counts.repository';

/** The durable consumer every replica of this service shares. */
export const RECEPTION_COUNT_DURABLE = 'accounts-message-reception';

/**
 * Counts `message.reception` events per account and billing period: the events that arrived
 * together (up to EVENTS_BATCH) in one statement, each message once however often it arrives.
 * Should a batch fail, each event comes back on its own.
 */
@Injectable()
export class ReceptionEventsController {
  constructor(private readonly counts: ReceptionCountsRepository) {}

  @StreamBatchConsumer({
    durables: { [RECEPTION_COUNT_DURABLE]: MessagesStreamSubjects.reception },
    decode: toCountedReception,
  })
  async count(items: ReadonlyArray<StreamItem<CountedReception>>): Promise<void> {
    await this.counts.count(items.map(({ event }) => event));
  }
}
