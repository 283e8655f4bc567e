import type { RoutedMailData } from '@envoi/contracts-routes';
import { InboundStreamSubjects } from '@envoi/contracts-routes';
import { StreamConsumer } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { toRoutedMail } from './routed-mail';
import { RoutedMailIntake } from './routed-mail-intake.service';

/** The durable consumer every replica of this service shares. */
export const ROUTED_MAIL_DURABLE = 'routes-inbound-routed';

/** Handles `events.inbound.routed.v1`: mail the MX accepted for routes. */
@Injectable()
export class RoutedMailController {
  constructor(private readonly intake: RoutedMailIntake) {}

  @StreamConsumer({
    durables: { [ROUTED_MAIL_DURABLE]: InboundStreamSubjects.routed },
    decode: toRoutedMail,
  })
  async accept(mail: RoutedMailData): Promise<void> {
    await this.intake.accept(mail);
  }
}
