import { TrackingController } from './tracking/tracking.controller';
import { V1EmailController } from './v1/email.controller';
import { AccountsController } from './v2/accounts.controller';
import { ApiKeysController } from './v2/api-keys.controller';
import { DomainsController } from './v2/domains.controller';
import { MembersController } from './v2/members.controller';
import { MessagesController } from './v2/messages.controller';
import { PingController } from './v2/ping.controller';
import { RouteStreamController } from './v2/route-stream.controller';
import { RoutesController } from './v2/routes.controller';
import { SmtpCredentialsController } from './v2/smtp-credentials.controller';
import { SubAccountApiKeysController } from './v2/sub-account-api-keys.controller';
import { SubAccountsController } from './v2/sub-accounts.controller';
import { SubAccountsUsageController } from './v2/sub-accounts-usage.controller';
import { SuppressionsController } from './v2/suppressions.controller';
import { WebhookDeliveriesController } from './v2/webhook-deliveries.controller';
import { WebhookStreamController } from './v2/webhook-stream.controller';
import { WebhooksController } from './v2/webhooks.controller';

/** Every HTTP controller of the edge, in one list the route-policy test can inspect. */
export const GATEWAY_CONTROLLERS = [
  PingController,
  AccountsController,
  MembersController,
  ApiKeysController,
  // Before SubAccountsController, whose `:sub_account_id` could otherwise take `usage`.
  SubAccountsUsageController,
  SubAccountsController,
  SubAccountApiKeysController,
  DomainsController,
  SuppressionsController,
  WebhooksController,
  WebhookDeliveriesController,
  SmtpCredentialsController,
  WebhookStreamController,
  RouteStreamController,
  RoutesController,
  MessagesController,
  V1EmailController,
  TrackingController,
] as const;
