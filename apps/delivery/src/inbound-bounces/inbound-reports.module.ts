import { Module } from '@nestjs/common';

import { AttemptsRepository } from '../attempts/attempts.repository';
import { MessageViews } from '../worker/message-views';
import { InboundPurgeService } from './inbound-purge.service';
import { InboundReportsController } from './inbound-reports.controller';
import { InboundReportsRepository } from './inbound-reports.repository';
import { InboundReportsService } from './inbound-reports.service';

/** Asynchronous bounces and complaints received by the MX (issue 17). */
@Module({
  providers: [
    AttemptsRepository,
    MessageViews,
    InboundReportsRepository,
    InboundReportsService,
    InboundReportsController,
    InboundPurgeService,
  ],
})
export class InboundReportsModule {}
