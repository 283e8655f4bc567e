import { eventSubject, requestSubject } from '@envoi/contracts-core';
import { IsBoolean, IsInt, IsOptional, IsUUID, Max, Min } from 'class-validator';

import { DomainRestriction } from './requests';

/**
 * The webhook stream of platform notes 1.12 (what `ahasend webhooks listen` uses): a webhook's
 * events buffered for one listener at a time, replayed when it attaches, removed once written to it.
 */

/** POST …/webhooks/stream: `webhook_id` absent creates a temporary webhook (global, every event). */
export class OpenWebhookStreamRequest {
  @IsUUID() account_id!: string;
  @IsOptional() @IsUUID() webhook_id?: string;
  @DomainRestriction() domains?: string[];
}

/** The answer to POST …/webhooks/stream, before the gateway adds `ws_url`. */
export interface OpenedWebhookStreamRecord {
  webhook_id: string;
}

/** A listener asks to attach to a webhook's stream (the WebSocket handshake). */
export class AttachWebhookStreamRequest {
  @IsUUID() account_id!: string;
  @IsUUID() webhook_id!: string;
  /** The new listener's id (the `session_id` of its frames). */
  @IsUUID() session_id!: string;
  /** Replace a listener already attached instead of refusing. */
  @IsBoolean() force!: boolean;
  /** How long the attachment holds without a renewal (an ack). */
  @IsInt() @Min(1_000) @Max(600_000) lease_ms!: number;
  /** A domain-scoped key: only a scoped webhook all of whose domains are among these. */
  @DomainRestriction() domains?: string[];
}

export interface AttachedWebhookStreamRecord {
  /** The last seq buffered when the listener attached: frames up to it are `replay`. */
  replay_until_seq: number;
}

export class WebhookStreamSessionRef {
  @IsUUID() webhook_id!: string;
  @IsUUID() session_id!: string;
}

/** The buffered events after `after_seq`, oldest first; answered only to the attached listener. */
export class ReadWebhookStreamRequest extends WebhookStreamSessionRef {
  @IsInt() @Min(0) after_seq!: number;
  @IsInt() @Min(1) @Max(1_000) limit!: number;
}

/** Everything up to `seq` was written to the listener; also renews its attachment. */
export class AckWebhookStreamRequest extends WebhookStreamSessionRef {
  @IsInt() @Min(0) seq!: number;
  @IsInt() @Min(1_000) @Max(600_000) lease_ms!: number;
}

/** One buffered event: `body` is the payload an endpoint would receive, as sent. */
export interface WebhookStreamEventRecord {
  seq: number;
  /** The `webhook-id` a delivery of it carries. */
  event_id: string;
  event_type: string;
  body: string;
  /** When it was buffered (ISO 8601). */
  created_at: string;
}

export interface WebhookStreamEventsRecord {
  data: WebhookStreamEventRecord[];
}

/** The answer to an ack: false when the listener is no longer the attached one. */
export interface WebhookStreamAckRecord {
  attached: boolean;
}

/** Broadcast when events were buffered for a webhook's stream. */
export interface WebhookStreamAppendedEvent {
  webhook_ids: string[];
}

/** Broadcast when a listener attached (a forced attach replaces the previous one). */
export interface WebhookStreamAttachedEvent {
  webhook_id: string;
  session_id: string;
}

export const WebhookStreamSubjects = {
  open: requestSubject<OpenWebhookStreamRequest, OpenedWebhookStreamRecord>(
    'webhooks.stream.open.v1',
  ),
  attach: requestSubject<AttachWebhookStreamRequest, AttachedWebhookStreamRecord>(
    'webhooks.stream.attach.v1',
  ),
  read: requestSubject<ReadWebhookStreamRequest, WebhookStreamEventsRecord>(
    'webhooks.stream.read.v1',
  ),
  ack: requestSubject<AckWebhookStreamRequest, WebhookStreamAckRecord>('webhooks.stream.ack.v1'),
  detach: requestSubject<WebhookStreamSessionRef, WebhookStreamAckRecord>(
    'webhooks.stream.detach.v1',
  ),
  appended: eventSubject<WebhookStreamAppendedEvent>('webhooks.stream.appended.v1'),
  attached: eventSubject<WebhookStreamAttachedEvent>('webhooks.stream.attached.v1'),
} as const;
