import { HtmlTracker, StoredComposer } from '@envoi/shared-composition';
import { Module } from '@nestjs/common';

import { AcceptedRequestsModule } from '../accepted-requests/accepted-requests.module';
import { CreditReservations } from '../credit/credit-reservations.repository';
import { MessagesConfig } from '../messages.config';
import { RetentionRepository } from '../retention/retention.repository';
import { RetentionPurgeService } from '../retention/retention-purge.service';
import { AccountDefaultsService } from '../senders/account-defaults.service';
import { SenderAuthorizations } from '../senders/sender-authorizations.service';
import { SubmissionAccept } from '../submissions/submission-accept.service';
import { SubmissionsController } from '../submissions/submissions.controller';
import { TrackingRepository } from '../tracking/tracking.repository';
import { AcceptService } from './accept.service';
import { DeliveryViewService } from './delivery-view.service';
import { DeliveryViewReads } from './delivery-view-reads';
import { MessageContents } from './message-contents.service';
import { MessagesController } from './messages.controller';
import { MessagesRepository } from './messages.repository';
import { MessagesService } from './messages.service';
import { SendsRepository } from './sends.repository';
import { SuppressionChecks } from './suppression-checks.service';
import { SuppressionSnapshots } from './suppression-snapshots.service';

@Module({
  imports: [AcceptedRequestsModule],
  controllers: [MessagesController, SubmissionsController],
  providers: [
    MessagesRepository,
    TrackingRepository,
    RetentionRepository,
    SenderAuthorizations,
    AccountDefaultsService,
    CreditReservations,
    SuppressionChecks,
    SuppressionSnapshots,
    SendsRepository,
    {
      provide: StoredComposer,
      useFactory: (config: MessagesConfig) => new StoredComposer(new HtmlTracker(config)),
      inject: [MessagesConfig],
    },
    MessageContents,
    AcceptService,
    SubmissionAccept,
    MessagesService,
    DeliveryViewService,
    DeliveryViewReads,
    RetentionPurgeService,
  ],
})
export class MessagesModule {}
