import type { RoutedMailData } from '@envoi/contracts-routes';
import { InboundStreamSubjects } from '@envoi/contracts-routes';
import { StreamBatchConsumer, type StreamItem } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { toRoutedMail } from './routed-mail';
import { RoutedMailIntake } from './routed-mail-intake.service';

/** The durable consumer every replica of this service shares. */
export const ROUTED_MAIL_DURABLE = 'routes-inbound-routed';

/**
 * Handles `events.inbound.routed.v1`: mail the MX accepted for routes, the events that arrived
 * together (up to EVENTS_BATCH) taken in one transaction. Should a batch fail, each event comes
 * back on its own.
 */
@Injectable()
export class RoutedMailController {
  constructor(private readonly intake: RoutedMailIntake) {}

  @StreamBatchConsumer({
    durables: { [ROUTED_MAIL_DURABLE]: InboundStreamSubjects.routed },
    decode: toRoutedMail,
  })
  async accept(items: ReadonlyArray<StreamItem<RoutedMailData>>): Promise<void> {
    await this.intake.acceptAll(items.map(({ event }) => event));
  }
}
