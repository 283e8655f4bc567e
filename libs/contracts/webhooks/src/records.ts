/** Wire records of the webhooks API (reference contract `Webhook`, platform notes 2.9). */

/** Each flag turns on one event type; its name is also sent as the payload's `data.event`. */
export const WEBHOOK_EVENT_FLAGS = [
  'on_reception',
  'on_delivered',
  'on_transient_error',
  'on_failed',
  'on_bounced',
  'on_suppressed',
  'on_opened',
  'on_clicked',
  'on_suppression_created',
  'on_dns_error',
] as const;
export type WebhookEventFlag = (typeof WEBHOOK_EVENT_FLAGS)[number];

/** The event types of webhooks.yaml and the flag that subscribes to each. */
export const WEBHOOK_EVENT_TYPES = {
  'message.reception': 'on_reception',
  'message.delivered': 'on_delivered',
  'message.transient_error': 'on_transient_error',
  'message.failed': 'on_failed',
  'message.bounced': 'on_bounced',
  'message.suppressed': 'on_suppressed',
  'message.opened': 'on_opened',
  'message.clicked': 'on_clicked',
  'suppression.created': 'on_suppression_created',
  'domain.dns_error': 'on_dns_error',
} as const satisfies Record<string, WebhookEventFlag>;
export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;

export const WEBHOOK_SCOPES = ['global', 'scoped'] as const;
export type WebhookScope = (typeof WEBHOOK_SCOPES)[number];

export type WebhookEventFlags = Record<WebhookEventFlag, boolean>;

export interface WebhookRecord extends WebhookEventFlags {
  object: 'webhook';
  id: string;
  created_at: string;
  updated_at: string;
  name: string;
  url: string;
  enabled: boolean;
  scope: WebhookScope;
  /** Domain names; `[]` for a global webhook. */
  domains: string[];
  success_count: number;
  error_count: number;
  /** Consecutive failed calls, reset by the next success. */
  errors_since_last_success: number;
  last_request_at: string | null;
}

/** The 201 body of a creation: the only place the secret ever appears. */
export interface CreatedWebhookRecord extends WebhookRecord {
  secret: string;
}
