import type { StreamSubject } from '@envoi/contracts-core';
import { SetMetadata } from '@nestjs/common';

import type { StreamDelivery, StreamItem, StreamSettlement } from '../jetstream-consumer';

/** When a failed message is tried again, and how often at most. */
export interface RetryPolicy {
  /** Delay before the second delivery; doubles with each further one. */
  firstDelayMs: number;
  /** The delay stops growing here. */
  maxDelayMs: number;
  /**
   * Deliveries at most (-1: unlimited). A message that fails on its last one is recorded as a
   * dead letter (when the service keeps them) and terminated.
   */
  maxDeliveries: number;
}

/** How a consumer runs; what a declaration leaves out comes from the service's settings. */
export interface ConsumerTuning {
  /** Messages per pull at most (with a batch handler: per group). */
  batch?: number;
  /** Messages (or groups) handled at once. */
  concurrency?: number;
  /**
   * With a declaration's `weigh`: the consumer pulls more only while the weight it holds (less
   * what its handlers reported done) is under this (see DurableConsumerOptions.holding).
   */
  maxHeldWeight?: number;
  /** Unacknowledged this long after delivery, a message is delivered again. */
  ackWaitMs?: number;
  retry?: RetryPolicy;
  /** On shutdown, how long the messages in hand get to finish. */
  stopGraceMs?: number;
  /** After the grace period, how long aborted handlers get to settle their messages. */
  abortSettleMs?: number;
}

/** What a stream handler declares about the messages it takes. */
export interface StreamConsumerDeclaration<E, Settings = unknown> {
  /**
   * Durable consumer name → the subject it filters, each shared by every replica of the service
   * (nats-server 2.9 gives a consumer a single filter subject).
   */
  durables: Readonly<Record<string, StreamSubject<unknown>>>;
  /**
   * Turns the parsed JSON payload into the handler's event, validating it against its contract
   * (see contractDecoder); throws UnprocessableMessageError for a payload no retry can help.
   */
  decode(payload: unknown): E;
  /**
   * Tells from a message's raw payload, before it is parsed, that the handler would do nothing
   * with it (an event of a subject it takes that carries nothing it acts on): the message is
   * acknowledged as it arrives, never decoded or handled, nor recorded as a dead letter when
   * malformed. Must not be true for any message the handler acts on.
   */
  ignores?: (data: Uint8Array) => boolean;
  /** Pushes the ack deadline back while the handler runs (long jobs). */
  heartbeat?: boolean;
  /**
   * The units of work a message carries (a job of n messages: n), read from its parsed payload
   * before it is validated; with the tuning's `maxHeldWeight`, caps the work a replica holds.
   */
  weigh?: (payload: unknown) => number;
  /** The consumer's tuning, read from the service's settings at boot. */
  tuning?(settings: Settings): ConsumerTuning;
}

export type StreamHandlerMethod<E> = (
  event: E,
  delivery: StreamDelivery,
) => Promise<void | StreamSettlement>;
export type StreamBatchHandlerMethod<E> = (items: ReadonlyArray<StreamItem<E>>) => Promise<void>;

export const STREAM_CONSUMER = Symbol('STREAM_CONSUMER');

/** The metadata a decorated method carries. */
export interface StreamConsumerMetadata {
  declaration: StreamConsumerDeclaration<unknown, unknown>;
  batched: boolean;
}

/** Accepts the methods whose signature fits `Method` (fewer parameters included). */
type MethodDecorator<Method> = <M extends Method>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Marks a provider method as the handler of the declared stream subjects: it gets each decoded
 * event; resolving acknowledges it, a returned settlement hands it back or drops it, throwing
 * retries it under the retry policy. Must be idempotent (delivery is at least once).
 */
export function StreamConsumer<E, Settings = unknown>(
  declaration: StreamConsumerDeclaration<E, Settings>,
): MethodDecorator<StreamHandlerMethod<E>> {
  return metadataDecorator({ declaration, batched: false });
}

/**
 * Marks a provider method as the batch handler of the declared stream subjects: it gets, in
 * stream order, the events that arrived while the previous group was handled (up to `batch`);
 * resolving acknowledges each. When it throws, each event is handed to it again on its own, so a
 * poison event neither blocks nor loses the others. It runs in the trace context its events share
 * (their request id when they carry the same one); where it works on one event alone, it
 * restores that event's context: `runInTraceContext(item.delivery.trace, …)`.
 */
export function StreamBatchConsumer<E, Settings = unknown>(
  declaration: StreamConsumerDeclaration<E, Settings>,
): MethodDecorator<StreamBatchHandlerMethod<E>> {
  return metadataDecorator({ declaration, batched: true });
}

function metadataDecorator<E, Settings, Method>(metadata: {
  declaration: StreamConsumerDeclaration<E, Settings>;
  batched: boolean;
}): MethodDecorator<Method> {
  return (target, key, descriptor) => {
    SetMetadata(STREAM_CONSUMER, metadata as StreamConsumerMetadata)(target, key, descriptor);
  };
}
