import { Module } from '@nestjs/common';

import { NotificationEventsController } from './notification-events.controller';
import { NotificationRecipientsRepository } from './notification-recipients.repository';
import { NotificationSender } from './notification-sender';

/** Emails to account members: composed here, sent through the operator's smarthost. */
@Module({
  providers: [NotificationEventsController, NotificationRecipientsRepository, NotificationSender],
})
export class NotificationsModule {}
