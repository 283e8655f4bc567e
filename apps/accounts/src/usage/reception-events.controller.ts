import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { StreamBatchConsumer, type StreamItem } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { type CountedReception, toCountedReceptions } from './counted-reception';
import { ReceptionCountsRepository } from './reception-counts.repository';

/**
 * The durable consumer of `message.send_receptions`, which sends published before their
 * receptions were counted from reception batches: kept for the rows still in the stream. Its
 * predecessor, `accounts-message-reception`, read one `message.reception` event per message; an
 * operator removes it once every replica of both services runs a later version (README,
 * "Production deployment").
 */
export const RECEPTION_COUNT_DURABLE = 'accounts-message-send-receptions';

/** The durable consumer of `message.reception_batch`, which every accepted message is in. */
export const RECEPTION_BATCH_COUNT_DURABLE = 'accounts-message-reception-batch';

/**
 * Counts receptions per account and billing period from `message.reception_batch` events (the
 * reception events of the sends one commit stored) and from the `message.send_receptions` events
 * sends published before: the events that arrived together (up to EVENTS_BATCH) in one
 * statement, each message once however often, and through however many of the two subjects, it
 * arrives (a send published before the switch is in both). Should a batch fail, each event comes
 * back on its own.
 */
@Injectable()
export class ReceptionEventsController {
  constructor(private readonly counts: ReceptionCountsRepository) {}

  @StreamBatchConsumer({
    durables: {
      [RECEPTION_BATCH_COUNT_DURABLE]: MessagesStreamSubjects.receptionBatch,
      [RECEPTION_COUNT_DURABLE]: MessagesStreamSubjects.sendReceptions,
    },
    decode: toCountedReceptions,
  })
  async count(items: ReadonlyArray<StreamItem<CountedReception[]>>): Promise<void> {
    await this.counts.count(items.flatMap(({ event }) => event));
  }
}
