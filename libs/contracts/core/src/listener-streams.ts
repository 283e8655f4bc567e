import { IsArray, IsBoolean, IsInt, IsOptional, IsString, IsUUID, Max, Min } from 'class-validator';

import { type EventSubject, eventSubject, type RequestSubject, requestSubject } from './subjects';

/**
 * Listener streams (platform notes 1.12, what `webhooks listen` and `routes listen` use): the
 * events of one target (a webhook, a route) buffered for one listener at a time, replayed when it
 * attaches, removed once written to it. The service owning the target answers these requests on
 * `<service>.stream.*`; the gateway serves the WebSocket.
 */

/** A listener asks to attach to a target's stream (the WebSocket handshake). */
export class AttachListenerStreamRequest {
  @IsUUID() account_id!: string;
  @IsUUID() target_id!: string;
  /** The new listener's id (the `session_id` of its frames). */
  @IsUUID() session_id!: string;
  /** Replace a listener already attached instead of refusing. */
  @IsBoolean() force!: boolean;
  /** How long the attachment holds without a renewal (an ack). */
  @IsInt() @Min(1_000) @Max(600_000) lease_ms!: number;
  /** A domain-scoped key: only a target all of whose domains are among these. */
  @IsOptional() @IsArray() @IsString({ each: true }) domains?: string[];
}

export interface AttachedListenerStreamRecord {
  /** The last seq buffered when the listener attached: frames up to it are `replay`. */
  replay_until_seq: number;
}

export class ListenerStreamSessionRef {
  @IsUUID() target_id!: string;
  @IsUUID() session_id!: string;
}

/** The buffered events after `after_seq`, oldest first; answered only to the attached listener. */
export class ReadListenerStreamRequest extends ListenerStreamSessionRef {
  @IsInt() @Min(0) after_seq!: number;
  @IsInt() @Min(1) @Max(1_000) limit!: number;
}

/** Everything up to `seq` was written to the listener; also renews its attachment. */
export class AckListenerStreamRequest extends ListenerStreamSessionRef {
  @IsInt() @Min(0) seq!: number;
  @IsInt() @Min(1_000) @Max(600_000) lease_ms!: number;
}

/** One buffered event: `body` is the payload an endpoint would receive, as sent. */
export interface ListenerStreamEventRecord {
  seq: number;
  /** The `webhook-id` a delivery of it carries. */
  event_id: string;
  event_type: string;
  body: string;
  /** When it was buffered (ISO 8601). */
  created_at: string;
}

export interface ListenerStreamEventsRecord {
  data: ListenerStreamEventRecord[];
}

/** The answer to an ack or a detach: false when the listener is no longer the attached one. */
export interface ListenerStreamAckRecord {
  attached: boolean;
}

/** Broadcast when events were buffered for targets' streams. */
export interface ListenerStreamAppendedEvent {
  target_ids: string[];
}

/** Broadcast when a listener attached (a forced attach replaces the previous one). */
export interface ListenerStreamAttachedEvent {
  target_id: string;
  session_id: string;
}

/** The subjects every listener stream has, whatever its target. */
export interface ListenerStreamSubjects {
  attach: RequestSubject<AttachListenerStreamRequest, AttachedListenerStreamRecord>;
  read: RequestSubject<ReadListenerStreamRequest, ListenerStreamEventsRecord>;
  ack: RequestSubject<AckListenerStreamRequest, ListenerStreamAckRecord>;
  detach: RequestSubject<ListenerStreamSessionRef, ListenerStreamAckRecord>;
  /** Core NATS broadcasts (at most once: a listener also reads on every renewal). */
  appended: EventSubject<ListenerStreamAppendedEvent>;
  attached: EventSubject<ListenerStreamAttachedEvent>;
}

/** The listener stream subjects of the service owning the targets (`webhooks`, `routes`). */
export function listenerStreamSubjects(service: string): ListenerStreamSubjects {
  return {
    attach: requestSubject(`${service}.stream.attach.v1`),
    read: requestSubject(`${service}.stream.read.v1`),
    ack: requestSubject(`${service}.stream.ack.v1`),
    detach: requestSubject(`${service}.stream.detach.v1`),
    appended: eventSubject(`${service}.stream.appended.v1`),
    attached: eventSubject(`${service}.stream.attached.v1`),
  };
}
