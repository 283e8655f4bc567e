import type { BounceMailData, FeedbackMailData } from '@envoi/contracts-routes';
import { InboundStreamSubjects } from '@envoi/contracts-routes';
import { StreamConsumer } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { decodeBounceMail, decodeFeedbackMail } from './inbound-events';
import { InboundReportsService } from './inbound-reports.service';

/**
 * The MX's bounce and complaint mail (events.inbound.*), each on a durable consumer every
 * replica shares. A mail that matches nothing is kept and acknowledged; only a failure of the
 * bus or the database makes it come back.
 */
@Injectable()
export class InboundReportsController {
  constructor(private readonly reports: InboundReportsService) {}

  @StreamConsumer({
    durables: { 'delivery-inbound-bounce': InboundStreamSubjects.bounce },
    decode: decodeBounceMail,
    heartbeat: true,
  })
  async bounce(data: BounceMailData): Promise<void> {
    await this.reports.bounce(data);
  }

  @StreamConsumer({
    durables: { 'delivery-inbound-feedback': InboundStreamSubjects.feedback },
    decode: decodeFeedbackMail,
    heartbeat: true,
  })
  async feedback(data: FeedbackMailData): Promise<void> {
    await this.reports.feedback(data);
  }
}
