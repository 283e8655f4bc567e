import type { WebhookEventFlag } from '@envoi/contracts-webhooks';

import type { WebhookEntity } from './webhook.entity';

/** The entity property (and so the column) of each event flag. */
export const FLAG_PROPERTIES = {
  on_reception: 'onReception',
  on_delivered: 'onDelivered',
  on_transient_error: 'onTransientError',
  on_failed: 'onFailed',
  on_bounced: 'onBounced',
  on_suppressed: 'onSuppressed',
  on_opened: 'onOpened',
  on_clicked: 'onClicked',
  on_suppression_created: 'onSuppressionCreated',
  on_dns_error: 'onDnsError',
} as const satisfies Record<WebhookEventFlag, keyof WebhookEntity>;
