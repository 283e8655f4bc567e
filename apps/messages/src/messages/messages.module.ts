import { Module } from '@nestjs/common';

import { RetentionPurgeService } from '../retention/retention-purge.service';
import { AccountDefaultsService } from '../senders/account-defaults.service';
import { SenderAuthorizations } from '../senders/sender-authorizations.service';
import { HtmlTracker } from '../tracking/html-tracker.service';
import { AcceptService } from './accept.service';
import { DeliveryViewService } from './delivery-view.service';
import { MessagesController } from './messages.controller';
import { MessagesService } from './messages.service';
import { SuppressionChecks } from './suppression-checks.service';

@Module({
  controllers: [MessagesController],
  providers: [
    SenderAuthorizations,
    AccountDefaultsService,
    SuppressionChecks,
    HtmlTracker,
    AcceptService,
    MessagesService,
    DeliveryViewService,
    RetentionPurgeService,
  ],
})
export class MessagesModule {}
