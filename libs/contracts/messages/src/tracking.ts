import type { StreamEvent } from '@envoi/contracts-core';
import { IsOptional, IsString, MaxLength } from 'class-validator';

import type { MessageReceptionData } from './records';

/** Longest tracking token accepted (the tokens Envoi writes are 59 characters). */
export const TRACKING_TOKEN_MAX_LENGTH = 128;

/**
 * A tracking pixel loaded or a tracked link followed (gateway → messages): the token from the
 * URL, as given, and who asked.
 */
export class TrackingHitRequest {
  @IsString() @MaxLength(TRACKING_TOKEN_MAX_LENGTH) token!: string;
  @IsOptional() @IsString() @MaxLength(1_024) user_agent?: string;
  @IsOptional() @IsString() @MaxLength(64) ip?: string;
}

/** An open was recorded. */
export interface TrackedOpenResult {
  tracked: true;
}

/** A click was recorded: where the link goes (the URL stored at accept time, never the token's). */
export interface TrackedClickResult {
  url: string;
}

/** `data` of `message.opened` (reference webhooks.yaml MessageOpenedWebhookPayload). */
export interface MessageOpenedData extends Omit<MessageReceptionData, 'event'> {
  event: 'on_opened';
  user_agent: string;
  ip: string;
  is_bot: boolean;
}

/** `data` of `message.clicked` (reference webhooks.yaml MessageClickedWebhookPayload). */
export interface MessageClickedData extends Omit<MessageReceptionData, 'event'> {
  event: 'on_clicked';
  url: string;
  user_agent: string;
  ip: string;
  is_bot: boolean;
}

export type MessageOpenedEvent = StreamEvent<'message.opened', MessageOpenedData>;
export type MessageClickedEvent = StreamEvent<'message.clicked', MessageClickedData>;
