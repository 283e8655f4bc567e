import { AccountsStreamSubjects, ApiKeyIpAllowListChangedData } from '@envoi/contracts-accounts';
import { RouteDisabledData, RoutesStreamSubjects } from '@envoi/contracts-routes';
import { WebhookDisabledData, WebhooksStreamSubjects } from '@envoi/contracts-webhooks';
import { type ConsumerTuning, eventDataDecoder, StreamConsumer } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import { AccountsConfig } from '../accounts.config';
import {
  type ComposedNotification,
  composeIpAllowListChanged,
  composeRouteDisabled,
  composeWebhookDisabled,
  type NotificationContext,
} from './notification-composer';
import {
  type Audience,
  NotificationRecipientsRepository,
} from './notification-recipients.repository';
import { NotificationSender } from './notification-sender';

/** The durable consumers every replica of this service shares, one per notified event. */
export const WEBHOOK_DISABLED_DURABLE = 'accounts-notify-webhook-disabled';
export const IP_ALLOW_LIST_CHANGED_DURABLE = 'accounts-notify-ip-allow-list-changed';
export const ROUTE_DISABLED_DURABLE = 'accounts-notify-route-disabled';

export const NOTIFICATION_SUBJECTS = [
  WebhooksStreamSubjects.webhookDisabled,
  AccountsStreamSubjects.apiKeyIpAllowListChanged,
  RoutesStreamSubjects.routeDisabled,
] as const;

/** The data of a stream event of `type`, validated against its contract (see shared-nats). */
export const eventData = eventDataDecoder;

/** Smarthost refusals come back with backoff, a bounded number of times, then a dead letter. */
function notificationTuning(settings: AccountsConfig): ConsumerTuning {
  return {
    retry: {
      firstDelayMs: settings.NOTIFICATIONS_RETRY_MS,
      maxDelayMs: Math.max(settings.NOTIFICATIONS_RETRY_MAX_MS, settings.NOTIFICATIONS_RETRY_MS),
      maxDeliveries: settings.NOTIFICATIONS_MAX_ATTEMPTS,
    },
  };
}

/** Emails account members about what needs their attention (platform notes 1.2 and 2.9). */
@Injectable()
export class NotificationEventsController {
  private readonly logger = new Logger(NotificationEventsController.name);

  constructor(
    private readonly recipients: NotificationRecipientsRepository,
    private readonly sender: NotificationSender,
    private readonly config: AccountsConfig,
  ) {}

  /** Every member of the account learns that a webhook was disabled. */
  @StreamConsumer({
    durables: { [WEBHOOK_DISABLED_DURABLE]: WebhooksStreamSubjects.webhookDisabled },
    decode: eventData('webhook.disabled', WebhookDisabledData),
    heartbeat: true,
    tuning: notificationTuning,
  })
  async webhookDisabled(data: WebhookDisabledData): Promise<void> {
    await this.notify(data.account_id, 'all-members', (context) =>
      composeWebhookDisabled(data, context),
    );
  }

  /** Every member of the account learns that a route was disabled (platform notes 2.8). */
  @StreamConsumer({
    durables: { [ROUTE_DISABLED_DURABLE]: RoutesStreamSubjects.routeDisabled },
    decode: eventData('route.disabled', RouteDisabledData),
    heartbeat: true,
    tuning: notificationTuning,
  })
  async routeDisabled(data: RouteDisabledData): Promise<void> {
    await this.notify(data.account_id, 'all-members', (context) =>
      composeRouteDisabled(data, context),
    );
  }

  /** The owners and administrators learn that an API key's IP allow list changed. */
  @StreamConsumer({
    durables: {
      [IP_ALLOW_LIST_CHANGED_DURABLE]: AccountsStreamSubjects.apiKeyIpAllowListChanged,
    },
    decode: eventData('api_key.ip_allow_list_changed', ApiKeyIpAllowListChangedData),
    heartbeat: true,
    tuning: notificationTuning,
  })
  async ipAllowListChanged(data: ApiKeyIpAllowListChangedData): Promise<void> {
    await this.notify(data.account_id, 'administrators', (context) =>
      composeIpAllowListChanged(data, context),
    );
  }

  private async notify(
    accountId: string,
    audience: Audience,
    compose: (context: NotificationContext) => ComposedNotification,
  ): Promise<void> {
    if (!this.sender.enabled) return;
    const recipients = await this.recipients.find(accountId, audience);
    if (!recipients || recipients.emails.length === 0) {
      this.logger.log(`account ${accountId}: nobody to notify`);
      return;
    }
    const notification = compose({
      accountName: recipients.accountName,
      dashboardUrl: this.config.NOTIFICATIONS_DASHBOARD_URL,
    });
    await this.sender.send(recipients.emails, notification);
  }
}
