/**
 * Durable events travel on NATS JetStream. Every service's outbox relay publishes into one stream
 * of domain events (message.*, suppression.*, domain.*, route.*), each message carrying its event
 * id as `Nats-Msg-Id` so that a re-published event is dropped by the stream.
 */
export const EVENTS_STREAM = 'EVENTS';

/**
 * Subjects of the events stream: `events.<entity>.<event>.v<N>`. The version is the payload's:
 * a change consumers could not read gets a new subject (`.v2`) beside the old one.
 */
export const EVENTS_SUBJECT_PREFIX = 'events';
export const EVENTS_STREAM_SUBJECTS: readonly string[] = [`${EVENTS_SUBJECT_PREFIX}.>`];

/**
 * Durable work for the delivery workers: a work-queue stream (a message is removed once a worker
 * acknowledges it). Jobs are small references (a message id), never message content; each
 * carries its outbox row id as `Nats-Msg-Id`.
 */
export const DELIVERY_STREAM = 'DELIVERY';
export const DELIVERY_JOBS_SUBJECT = 'delivery.jobs.v1';
export const DELIVERY_STREAM_SUBJECTS: readonly string[] = [DELIVERY_JOBS_SUBJECT];

/** A subject of a durable stream, with its event type attached (phantom type). */
export interface StreamSubject<Event> {
  readonly kind: 'stream';
  readonly stream: string;
  readonly name: string;
  readonly types?: { event: Event };
}

/** `events.<entity>.<event>.v<N>`, like the request subjects' `.v<N>`. */
const STREAM_SUBJECT_PATTERN = /^events(\.[a-z][a-z0-9_-]*)+\.v[1-9][0-9]*$/;

export function streamSubject<Event>(name: string): StreamSubject<Event> {
  if (!STREAM_SUBJECT_PATTERN.test(name)) throw new Error(`invalid stream subject: ${name}`);
  return { kind: 'stream', stream: EVENTS_STREAM, name };
}

/** The subject of the delivery work queue, with its job type attached. */
export function deliveryJobSubject<Job>(): StreamSubject<Job> {
  return { kind: 'stream', stream: DELIVERY_STREAM, name: DELIVERY_JOBS_SUBJECT };
}

export type StreamEventOf<S> = S extends StreamSubject<infer Event> ? Event : never;

/**
 * The envelope of every durable event: `id` is unique per event (consumers deduplicate on it, and
 * it is the `Nats-Msg-Id`), `type` the public event type (`domain.dns_error`), `timestamp` when it
 * happened (RFC 3339). `data` is the public webhook payload's `data`.
 */
export interface StreamEvent<Type extends string, Data> {
  id: string;
  type: Type;
  timestamp: string;
  data: Data;
}
