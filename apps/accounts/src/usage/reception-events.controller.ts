import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import { StreamBatchConsumer, type StreamItem } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { type CountedReception, toCountedReceptions } from './counted-reception';
import { ReceptionCountsRepository } from './reception-counts.repository';

/**
 * The durable consumer every replica of this service shares. Its predecessor,
 * `accounts-message-reception`, read one `message.reception` event per message; an operator
 * removes it once every replica of both services runs this version (README, "Production
 * deployment").
 */
export const RECEPTION_COUNT_DURABLE = 'accounts-message-send-receptions';

/**
 * Counts receptions per account and billing period from `message.send_receptions` events (one
 * per send, naming its messages): the events that arrived together (up to EVENTS_BATCH) in one
 * statement, each message once however often it arrives. Should a batch fail, each event comes
 * back on its own.
 */
@Injectable()
export class ReceptionEventsController {
  constructor(private readonly counts: ReceptionCountsRepository) {}

  @StreamBatchConsumer({
    durables: { [RECEPTION_COUNT_DURABLE]: MessagesStreamSubjects.sendReceptions },
    decode: toCountedReceptions,
  })
  async count(items: ReadonlyArray<StreamItem<CountedReception[]>>): Promise<void> {
    await this.counts.count(items.flatMap(({ event }) => event));
  }
}
