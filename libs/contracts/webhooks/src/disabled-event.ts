import type { StreamEvent } from '@envoi/contracts-core';
import { streamSubject } from '@envoi/contracts-core';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Min } from 'class-validator';

/** Why the platform turned a webhook off: its endpoint answered 410 Gone, or failed too often. */
export const WEBHOOK_DISABLED_REASONS = ['gone', 'consecutive_failures'] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];

/** A webhook the platform disabled on its own (never a user's `enabled: false`). */
export class WebhookDisabledData {
  @IsUUID() account_id!: string;
  @IsUUID() webhook_id!: string;
  @IsString() name!: string;
  @IsString() url!: string;
  @IsIn(WEBHOOK_DISABLED_REASONS) reason!: WebhookDisabledReason;
  /** Failed calls in a row when it was disabled (the one that disabled it included). */
  @IsInt() @Min(0) consecutive_failures!: number;
  /** The HTTP status of the last call; null when it got no response (refused, timed out). */
  @IsOptional() @IsInt() last_status!: number | null;
  @IsString() disabled_at!: string;
}

export type WebhookDisabledEvent = StreamEvent<'webhook.disabled', WebhookDisabledData>;

/** Durable events of the webhooks service on the EVENTS stream, published through its outbox. */
export const WebhooksStreamSubjects = {
  /** Published in the statement that disables the webhook, so that its members are told. */
  webhookDisabled: streamSubject<WebhookDisabledEvent>('events.webhook.disabled.v1'),
} as const;
