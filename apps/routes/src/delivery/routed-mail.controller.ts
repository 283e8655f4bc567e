import type { RoutedMailData } from '@envoi/contracts-routes';
import { InboundStreamSubjects } from '@envoi/contracts-routes';
import { StreamBatchConsumer, type StreamItem } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { toRoutedMail } from './routed-mail';
import { RoutedMailIntake } from './routed-mail-intake.service';

/** The durable consumer every replica of this service shares. */
export const ROUTED_MAIL_DURABLE = 'routes-inbound-routed';

/**
 * Batches a replica takes at once: the next batch's spools are read and parsed while the
 * previous one's transaction commits.
 */
const BATCHES_AT_ONCE = 2;

/**
 * Handles `events.inbound.routed.v1`: mail the MX accepted for routes, the events that arrived
 * together (up to EVENTS_BATCH) taken in one transaction, two batches at a time. Should a batch
 * fail, each event comes back on its own.
 */
@Injectable()
export class RoutedMailController {
  constructor(private readonly intake: RoutedMailIntake) {}

  @StreamBatchConsumer({
    durables: { [ROUTED_MAIL_DURABLE]: InboundStreamSubjects.routed },
    decode: toRoutedMail,
    tuning: () => ({ concurrency: BATCHES_AT_ONCE }),
  })
  async accept(items: ReadonlyArray<StreamItem<RoutedMailData>>): Promise<void> {
    await this.intake.acceptAll(
      items.map(({ event }) => event),
      { firstDelivery: items.every(({ delivery }) => delivery.deliveryCount === 1) },
    );
  }
}
