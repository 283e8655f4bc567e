import { setImmediate as nextTurn } from 'node:timers/promises';

import type { StreamSubject } from '@envoi/contracts-core';
import {
  type HeaderRead,
  runInTraceContext,
  sharedTraceContextFrom,
  type TraceContext,
  traceContextFrom,
} from '@envoi/shared-observability';
import {
  AckPolicy,
  type ConsumeCallback,
  type Consumer,
  type ConsumerConfig,
  type ConsumerMessages,
  DeliverPolicy,
  type FetchMessages,
  nanos,
  type NatsConnection,
  NatsError,
} from 'nats';

import { trackConsumer } from './consumer-attachments';
import { HeldMessage, HeldWeight } from './held-weight';

/** Where and how often a message was delivered, for logs and idempotency keys. */
export interface StreamDelivery {
  subject: string;
  /** The message's position in the stream: unique per message. */
  streamSequence: number;
  /** 1 on the first delivery. */
  deliveryCount: number;
  /** The publisher's `Nats-Msg-Id` (an outbox event's id), when it set one. */
  msgId: string | undefined;
  /** Aborted when the consumer stops and the grace period for the message in hand is over. */
  signal: AbortSignal;
  /**
   * The trace context the message carries (its request id, a new span of its trace). A handler
   * of one message runs in it; a batch handler restores it (runInTraceContext) where it works on
   * this message alone.
   */
  trace: TraceContext;
  /**
   * Tells the consumer that `units` of the message's weight are done (see `holding`): a job of
   * many messages reports each as it finishes, so that the next job is pulled before the last of
   * them. Does nothing for a consumer without `holding`.
   */
  progress(units: number): void;
}

/**
 * How a handler may settle its message instead of the default (resolving acks, throwing retries
 * with the retry policy): hand it back after a delay of its choosing, or drop it.
 */
export type StreamSettlement =
  { kind: 'ack' } | { kind: 'nak'; delayMs: number } | { kind: 'term'; reason: string };

/** A decoded message and where it came from, as a batch handler receives it. */
export interface StreamItem<E> {
  event: E;
  delivery: StreamDelivery;
}

export interface DurableConsumerLogger {
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Thrown by a decoder or handler for a message that no retry can help (malformed, unknown
 * version): the message is terminated instead of redelivered, and logged as an error.
 */
export class UnprocessableMessageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnprocessableMessageError';
  }
}

export interface DurableConsumerOptions<E> {
  connection: NatsConnection;
  /** The stream subject consumed; its stream must exist (the consumer waits until it does). */
  subject: StreamSubject<E>;
  /** Durable consumer name, shared by every replica of the consuming service. */
  durable: string;
  /**
   * Handles one message. Resolving acknowledges it; throwing redelivers it later (throwing
   * UnprocessableMessageError drops it). Must be idempotent: a message is delivered at least
   * once, and again after a lost acknowledgement or a stop that outlasted it.
   */
  handle(event: E, delivery: StreamDelivery): Promise<void | StreamSettlement>;
  /**
   * Tells from a message's raw payload, without decoding it, that the handler would do nothing
   * with it: such a message is acknowledged as it arrives, never decoded, grouped or handled (nor
   * recorded as a dead letter, should it be malformed). Must not be true for any message the
   * handler acts on; a predicate that throws takes the message.
   */
  ignores?: (data: Uint8Array) => boolean;
  /**
   * Optional batch mode: handles together, in stream order, the messages that have arrived while
   * the previous ones were handled (up to `batch`). Resolving acknowledges each of them; throwing
   * hands each to `handle` on its own, so a message that fails (or is unprocessable) neither
   * blocks nor loses the others. A message that cannot be decoded is settled on its own first,
   * and a lone message goes to `handle` directly. Must leave the same result as `handle` would,
   * message by message in that order, and be idempotent in the same way. Runs in the trace
   * context the messages share; each item's own is in `delivery.trace`.
   */
  handleBatch?(items: ReadonlyArray<StreamItem<E>>): Promise<void>;
  logger: DurableConsumerLogger;
  /**
   * Messages per pull, handled one after the other in stream order (or, with `handleBatch`, in
   * groups of what has arrived, up to `batch` each: a pull then asks for a group per free slot
   * and, without `heartbeat`, one group more, so a slot that frees finds its next group here).
   * Across replicas, and once a failed message is redelivered after later ones, there is no
   * order: handlers must not need one.
   */
  batch?: number;
  /** Unacknowledged this long after delivery, a message is delivered again. */
  ackWaitMs?: number;
  /** Messages (or groups) handled at once; 1 keeps stream order within a pull. */
  concurrency?: number;
  /**
   * Caps the work a replica holds, for messages that each carry several units of work (a job of
   * many messages): `weigh` reads a message's weight from its payload (1 when it cannot), and the
   * consumer pulls more only while the weight it holds, less what handlers reported done
   * (StreamDelivery.progress), is under `limit`. What it has not pulled stays in the stream for
   * other replicas rather than waiting here while its ack wait runs.
   */
  holding?: { weigh: (data: Uint8Array) => number; limit: number };
  /**
   * Tells the server the message in hand is still being worked on (every third of the ack wait),
   * so a long job is not redelivered to another worker while it runs.
   */
  heartbeat?: boolean;
  /**
   * Called (never throwing) for a message that used up its deliveries or is unprocessable,
   * before it is terminated: records it as a dead letter.
   */
  deadLetter?(
    durable: string,
    message: PulledMessage,
    delivery: StreamDelivery,
    error: unknown,
  ): Promise<void>;
  /** Deliveries at most; then the message is terminated and logged. -1: unlimited. */
  maxDeliver?: number;
  /** How long one pull waits for messages when there are none (at least 1000). */
  expiresMs?: number;
  /** Delay before redelivering a message whose handler failed, by its delivery count. */
  retryDelayMs?: (deliveryCount: number) => number;
  /** Longest pause between attempts to create the consumer or to pull after an error. */
  setupRetryMaxMs?: number;
  /** Turns the payload into an event; the default parses JSON. */
  decode?: (data: Uint8Array) => E;
}

export interface DurableConsumer {
  /** Resolves once the consumer exists on the server (or once stopped before that). */
  readonly ready: Promise<void>;
  /** Messages being handled now. */
  readonly busy: number;
  /**
   * Stops pulling, lets the messages (or groups) in hand finish and hands back the rest for
   * immediate redelivery. Waits at most `timeoutMs`; then aborts the signal of what is still in
   * hand and waits `abortSettleMs` more. Whatever is still unacknowledged then is redelivered
   * after the ack wait.
   */
  stop(timeoutMs?: number, abortSettleMs?: number): Promise<void>;
}

export const DURABLE_CONSUMER_DEFAULTS = {
  batch: 32,
  concurrency: 1,
  ackWaitMs: 30_000,
  maxDeliver: -1,
  expiresMs: 5_000,
  setupRetryMaxMs: 5_000,
} as const;

const MIN_EXPIRES_MS = 1_000;
const FIRST_SETUP_RETRY_MS = 250;
const DEFAULT_STOP_TIMEOUT_MS = 10_000;

/** Doubles from `firstMs` with each attempt (1-based), up to `maxMs`. */
export function exponentialBackoff(firstMs: number, maxMs: number): (attempt: number) => number {
  return (attempt) => Math.min(maxMs, firstMs * 2 ** Math.min(Math.max(attempt - 1, 0), 30));
}

/** Redelivery after 1 s, 2 s, 4 s, … up to one minute. */
export const defaultRetryDelay = exponentialBackoff(1_000, 60_000);

/** The durable pull consumer's configuration: explicit acks, every message of the subject. */
export function durableConsumerConfig(
  options: Pick<
    DurableConsumerOptions<unknown>,
    'subject' | 'durable' | 'ackWaitMs' | 'maxDeliver'
  >,
): Partial<ConsumerConfig> {
  return {
    durable_name: options.durable,
    filter_subject: options.subject.name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(options.ackWaitMs ?? DURABLE_CONSUMER_DEFAULTS.ackWaitMs),
    max_deliver: options.maxDeliver ?? DURABLE_CONSUMER_DEFAULTS.maxDeliver,
  };
}

/** The settings that differ between an existing consumer and the wanted one; empty when none. */
export function consumerConfigChanges(
  existing: Partial<ConsumerConfig>,
  wanted: Partial<ConsumerConfig>,
): Partial<ConsumerConfig> {
  const changes: Partial<ConsumerConfig> = {};
  if (existing.ack_wait !== wanted.ack_wait) changes.ack_wait = wanted.ack_wait;
  if (existing.max_deliver !== wanted.max_deliver) changes.max_deliver = wanted.max_deliver;
  if (existing.filter_subject !== wanted.filter_subject) {
    changes.filter_subject = wanted.filter_subject;
  }
  return changes;
}

const CONSUMER_NOT_FOUND = 10014;

function jsErrorCode(error: unknown): number | undefined {
  return error instanceof NatsError ? error.api_error?.err_code : undefined;
}

/** The part of a JetStream message that delivery needs (JsMsg satisfies it). */
export interface PulledMessage {
  readonly subject: string;
  readonly data: Uint8Array;
  readonly headers?: { get(name: string): string; keys?(): string[] } | undefined;
  readonly info: { readonly deliveryCount: number; readonly streamSequence: number };
  ack(): void;
  nak(millis?: number): void;
  /** Pushes the ack deadline back (an in-progress acknowledgement). */
  working(): void;
  /** Never called with a reason: servers before 2.11 ignore a `+TERM` that carries one. */
  term(): void;
}

const decoder = new TextDecoder();

export function decodeJson<E>(data: Uint8Array): E {
  try {
    return JSON.parse(decoder.decode(data)) as E;
  } catch (error) {
    throw new UnprocessableMessageError(`not JSON: ${String(error)}`);
  }
}

export type DeliveryOutcome = 'acked' | 'retried' | 'terminated';

/** What settling messages needs from the consumer's options. */
export type DeliveryOptions<E> = Pick<
  DurableConsumerOptions<E>,
  | 'handle'
  | 'handleBatch'
  | 'logger'
  | 'decode'
  | 'maxDeliver'
  | 'retryDelayMs'
  | 'durable'
  | 'deadLetter'
>;

const NEVER_ABORTED = new AbortController().signal;

/** Where a handler's progress on a message is reported (see StreamDelivery.progress). */
export type ProgressReport = (message: PulledMessage, units: number) => void;

const IGNORE_PROGRESS: ProgressReport = () => undefined;

function headerReader(message: PulledMessage): HeaderRead {
  return (name) => message.headers?.get(name) || undefined;
}

/**
 * Where the message came from. Its id and trace context are read from its headers only when a
 * handler asks (a batch handler seldom does; its batch's context is read by handledTogether).
 */
function deliveryOf(
  message: PulledMessage,
  signal: AbortSignal,
  report: ProgressReport,
): StreamDelivery {
  let trace: TraceContext | undefined;
  return {
    subject: message.subject,
    streamSequence: message.info.streamSequence,
    deliveryCount: message.info.deliveryCount,
    get msgId() {
      return message.headers?.get('Nats-Msg-Id') || undefined;
    },
    signal,
    get trace() {
      trace ??= traceContextFrom(headerReader(message));
      return trace;
    },
    progress: (units) => report(message, units),
  };
}

/** Records the dead letter (when the consumer keeps them) and terminates the message. */
async function terminate<E>(
  message: PulledMessage,
  delivery: StreamDelivery,
  error: unknown,
  options: DeliveryOptions<E>,
): Promise<'terminated'> {
  if (options.deadLetter) await options.deadLetter(options.durable, message, delivery, error);
  message.term();
  return 'terminated';
}

function settle(
  message: PulledMessage,
  settlement: StreamSettlement | void,
  what: string,
  logger: DurableConsumerLogger,
): DeliveryOutcome {
  if (!settlement || settlement.kind === 'ack') {
    message.ack();
    return 'acked';
  }
  if (settlement.kind === 'nak') {
    message.nak(settlement.delayMs);
    return 'retried';
  }
  logger.error(`${what} dropped: ${settlement.reason}`);
  message.term();
  return 'terminated';
}

/**
 * Hands one message to the handler, in the trace context its headers carry (its log lines and
 * onward calls keep the request id that started it), and settles it: ack on success; nak with a
 * delay on failure; term when it is unprocessable or has used up its deliveries. Never throws.
 */
export function deliverMessage<E>(
  message: PulledMessage,
  options: DeliveryOptions<E>,
  signal: AbortSignal = NEVER_ABORTED,
  report: ProgressReport = IGNORE_PROGRESS,
): Promise<DeliveryOutcome> {
  const delivery = deliveryOf(message, signal, report);
  return runInTraceContext(delivery.trace, () => handleAndSettle(message, delivery, options));
}

/** deliverMessage's work, in the trace context the message carries. */
async function handleAndSettle<E>(
  message: PulledMessage,
  delivery: StreamDelivery,
  options: DeliveryOptions<E>,
): Promise<DeliveryOutcome> {
  const what = `${options.durable}: ${delivery.subject} #${delivery.streamSequence}`;
  let settlement: StreamSettlement | void;
  try {
    const event = (options.decode ?? decodeJson<E>)(message.data);
    settlement = await options.handle(event, delivery);
  } catch (error) {
    if (error instanceof UnprocessableMessageError) {
      options.logger.error(`${what} is unprocessable, dropped: ${error.message}`);
      return terminate(message, delivery, error, options);
    }
    const maxDeliver = options.maxDeliver ?? DURABLE_CONSUMER_DEFAULTS.maxDeliver;
    if (maxDeliver > 0 && delivery.deliveryCount >= maxDeliver) {
      options.logger.error(
        `${what} failed on its last delivery (${delivery.deliveryCount}), dropped: ${String(error)}`,
      );
      return terminate(message, delivery, error, options);
    }
    const delay = (options.retryDelayMs ?? defaultRetryDelay)(delivery.deliveryCount);
    options.logger.warn(
      `${what} failed (delivery ${delivery.deliveryCount}), redelivered in ${delay} ms: ${String(error)}`,
    );
    message.nak(delay);
    return 'retried';
  }
  return settle(message, settlement, what, options.logger);
}

async function deliverEach<E>(
  messages: readonly PulledMessage[],
  options: DeliveryOptions<E>,
  signal: AbortSignal,
  report: ProgressReport,
): Promise<DeliveryOutcome[]> {
  const outcomes: DeliveryOutcome[] = [];
  for (const message of messages) {
    outcomes.push(await deliverMessage(message, options, signal, report));
  }
  return outcomes;
}

/**
 * Hands a group of messages (stream order) to the batch handler and acks each once it resolved.
 * Without a batch handler, and for what the batch cannot take, it falls back to deliverMessage,
 * one message after the other: a message that does not decode is settled on its own first; a
 * lone message goes straight to `handle`; when the batch handler throws, every message of the
 * group is handed to `handle` on its own. Never throws; outcomes follow the messages' order.
 */
export async function deliverBatch<E>(
  messages: readonly PulledMessage[],
  options: DeliveryOptions<E>,
  signal: AbortSignal = NEVER_ABORTED,
  report: ProgressReport = IGNORE_PROGRESS,
): Promise<DeliveryOutcome[]> {
  const { handleBatch } = options;
  if (!handleBatch || messages.length < 2) return deliverEach(messages, options, signal, report);
  const outcomes = new Array<DeliveryOutcome>(messages.length);
  const decoded: Array<{ index: number; message: PulledMessage; item: StreamItem<E> }> = [];
  for (const [index, message] of messages.entries()) {
    let event: E;
    try {
      event = (options.decode ?? decodeJson<E>)(message.data);
    } catch {
      // deliverMessage decodes it again, fails the same way and settles it as it always has.
      outcomes[index] = await deliverMessage(message, options, signal, report);
      continue;
    }
    decoded.push({
      index,
      message,
      item: { event, delivery: deliveryOf(message, signal, report) },
    });
  }
  const together = decoded.length > 1 && (await handledTogether(decoded, handleBatch, options));
  for (const { index, message } of decoded) {
    if (together) {
      message.ack();
      outcomes[index] = 'acked';
    } else {
      outcomes[index] = await deliverMessage(message, options, signal, report);
    }
  }
  return outcomes;
}

/**
 * Runs the batch handler; false (logged) when it threw. A batch is one unit of work for several
 * messages, so it runs in the context they share (sharedTraceContextFrom: their request when they
 * all carry the same one, as the events of one send do); each item keeps its own in
 * `delivery.trace` for the handler's per-message work, and the messages handed to `handle` after
 * a failed batch each run in their own again.
 */
function handledTogether<E>(
  decoded: ReadonlyArray<{ message: PulledMessage; item: StreamItem<E> }>,
  handleBatch: (items: ReadonlyArray<StreamItem<E>>) => Promise<void>,
  options: DeliveryOptions<E>,
): Promise<boolean> {
  const items = decoded.map(({ item }) => item);
  const context = sharedTraceContextFrom(decoded.map(({ message }) => headerReader(message)));
  return runInTraceContext(context, async () => {
    try {
      await handleBatch(items);
      return true;
    } catch (error) {
      options.logger.warn(
        `${options.durable}: a batch of ${items.length} failed, handling each on its own: ${String(error)}`,
      );
      return false;
    }
  });
}

/**
 * The messages of one pull as they arrive (the fetch's callback hands each over as it is read,
 * without an async iterator's promises per message), taken in groups of what has arrived so far.
 * A pull that fails (consumer deleted, heartbeats missed) throws from take() once what arrived
 * before the failure has been taken.
 */
class PullInbox {
  private readonly queue: PulledMessage[] = [];
  private ended = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  /** Messages the pull has brought so far. */
  received = 0;

  /** Takes in a message of the pull. */
  readonly receive = (message: PulledMessage): void => {
    this.received += 1;
    this.queue.push(message);
    this.notify();
  };

  /**
   * Up to `max` messages in arrival order: what is waiting, else (once one comes) what arrives
   * in the same turn of the event loop. Empty once the pull has ended and everything was taken.
   */
  async take(max: number): Promise<PulledMessage[]> {
    if (this.queue.length === 0 && !this.ended) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      // One message wakes the taker; the rest of what the socket delivered with it follows.
      // Let it in, so it goes in this group rather than the next.
      if (max > 1) await nextTurn();
    }
    if (this.queue.length === 0 && this.failure) throw this.failure.error;
    return this.queue.splice(0, max);
  }

  /** The pull has ended: every message was handed over, or `error` ended it. */
  end(error: unknown): void {
    if (error) this.failure = { error };
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/**
 * Consumes a stream subject with a durable pull consumer shared by every replica of a service:
 * creates or updates the consumer, pulls bounded batches, and settles each message through
 * `deliverMessage` (or each group of messages through `deliverBatch`, with a batch handler). Setup and pull failures (stream not created yet, JetStream unavailable,
 * consumer deleted) are logged and retried with a capped backoff; the loop ends on stop() or when
 * the connection closes.
 */
export function startDurableConsumer<E>(options: DurableConsumerOptions<E>): DurableConsumer {
  return new DurableConsumerLoop(options);
}

/** A message (or group) being handled, with what stops and settles it. */
interface InFlight {
  abort: AbortController;
  done: Promise<void>;
}

const MIN_HEARTBEAT_MS = 100;

class DurableConsumerLoop<E> implements DurableConsumer {
  readonly ready: Promise<void>;
  private readonly done: Promise<void>;
  private markReady!: () => void;
  private stopping = false;
  /** The consumer exists on the server and the last setup or pull did not fail. */
  private attached = false;
  private readonly inFlight = new Set<InFlight>();
  private slotFreed: (() => void) | undefined;
  private batch: ConsumerMessages | undefined;
  private pause: { timer: NodeJS.Timeout; resume: () => void } | undefined;
  private readonly setupBackoff: (attempt: number) => number;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly weights: HeldWeight | undefined;

  constructor(private readonly options: DurableConsumerOptions<E>) {
    const expiresMs = options.expiresMs ?? DURABLE_CONSUMER_DEFAULTS.expiresMs;
    if (expiresMs < MIN_EXPIRES_MS) throw new Error(`expiresMs must be at least ${MIN_EXPIRES_MS}`);
    this.batchSize = positiveInteger('batch', options.batch ?? DURABLE_CONSUMER_DEFAULTS.batch);
    this.concurrency = positiveInteger(
      'concurrency',
      options.concurrency ?? DURABLE_CONSUMER_DEFAULTS.concurrency,
    );
    this.weights = options.holding && new HeldWeight(options.holding.limit);
    this.setupBackoff = exponentialBackoff(
      FIRST_SETUP_RETRY_MS,
      options.setupRetryMaxMs ?? DURABLE_CONSUMER_DEFAULTS.setupRetryMaxMs,
    );
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    trackConsumer(options.connection, {
      name: options.durable,
      attached: () => this.attached && !this.stopping,
    });
    // A loop that ends without ever being ready (the connection closed) must not leave waiters hanging.
    this.done = this.run().finally(() => this.markReady());
  }

  get busy(): number {
    return this.inFlight.size;
  }

  async stop(timeoutMs = DEFAULT_STOP_TIMEOUT_MS, abortSettleMs = 0): Promise<void> {
    if (this.stopping) return this.done;
    this.stopping = true;
    this.markReady();
    this.resume();
    this.slotFreed?.();
    // While a handler runs, the loop ends the pull itself once it is done (see startGroup).
    if (this.inFlight.size === 0) this.batch?.stop();
    const stopped = await within(this.settled(), timeoutMs);
    if (stopped) return;
    const left = [...this.inFlight];
    for (const entry of left) entry.abort.abort();
    if (abortSettleMs > 0 && (await within(this.settled(), abortSettleMs))) return;
    // Leave the hung handlers; the open pull must not take in (and strand) more messages.
    this.batch?.stop();
    this.options.logger.warn(
      `${this.options.durable}: still handling ${this.inFlight.size} message(s) after ${timeoutMs} ms; stopping anyway (redelivered later)`,
    );
  }

  /** The loop has ended and every message in hand is settled. */
  private async settled(): Promise<void> {
    await this.done;
    await Promise.all([...this.inFlight].map((entry) => entry.done));
  }

  private async run(): Promise<void> {
    const { connection, logger, durable } = this.options;
    let consumer: Consumer | undefined;
    let failures = 0;
    while (!this.stopping && !connection.isClosed()) {
      try {
        consumer ??= await this.setup();
        this.attached = true;
        this.markReady();
        await this.waitForRoom();
        if (this.stopping) break;
        await this.pullBatch(consumer);
        failures = 0;
      } catch (error) {
        this.attached = false;
        if (this.stopping || connection.isClosed()) break;
        consumer = undefined;
        const delay = this.setupBackoff(++failures);
        logger.warn(`${durable}: ${String(error)}; trying again in ${delay} ms`);
        await this.sleep(delay);
      }
    }
  }

  /**
   * Creates the consumer, or updates the settings that changed. Replicas racing to create it with
   * different settings (a rolling deployment) fail here once and converge on the next attempt.
   */
  private async setup(): Promise<Consumer> {
    const { connection, subject, durable } = this.options;
    const jsm = await connection.jetstreamManager();
    const wanted = durableConsumerConfig(this.options);
    let existing: Partial<ConsumerConfig> | undefined;
    try {
      existing = (await jsm.consumers.info(subject.stream, durable)).config;
    } catch (error) {
      if (jsErrorCode(error) !== CONSUMER_NOT_FOUND) throw error;
    }
    if (existing === undefined) {
      await jsm.consumers.add(subject.stream, wanted);
    } else {
      const changes = consumerConfigChanges(existing, wanted);
      if (Object.keys(changes).length > 0)
        await jsm.consumers.update(subject.stream, durable, changes);
    }
    return connection.jetstream().consumers.get(subject.stream, durable);
  }

  /**
   * One pull of what the free slots can take (pullSize), handled as it arrives: one message per
   * slot, or with a batch handler, each time all that arrived while a slot was busy.
   */
  private async pullBatch(consumer: Consumer): Promise<void> {
    const groupSize = this.options.handleBatch ? this.batchSize : 1;
    const inbox = new PullInbox();
    const expiresMs = this.options.expiresMs ?? DURABLE_CONSUMER_DEFAULTS.expiresMs;
    const pull: FetchMessages & ConsumeCallback = {
      max_messages: this.pullSize(),
      expires: expiresMs,
      callback: inbox.receive,
    };
    const pullEndsBy = Date.now() + expiresMs;
    const messages = await consumer.fetch(pull);
    this.batch = messages;
    // closed() never rejects: it resolves with the error that ended the pull, if any.
    const ended = messages.closed().then((error) => inbox.end(error));
    try {
      if (this.stopping) messages.stop();
      // Bounded: a pull yields at most pullSize() messages, and each group takes at least one.
      for (;;) {
        await this.waitForSlot();
        const group = await inbox.take(groupSize);
        if (group.length === 0) break;
        if (this.stopping) {
          // Fetched but not started: another replica (or the next start) takes them back.
          const delayMs = handBackDelayMs(inbox.received, pull.max_messages ?? 0, pullEndsBy);
          for (const message of group) message.nak(delayMs);
        } else {
          const taken = this.withoutIgnored(group);
          if (taken.length > 0) this.startGroup(taken);
        }
      }
    } finally {
      this.weights?.pullEnded();
      this.batch = undefined;
      // A no-op once the pull has ended; otherwise what it still holds is redelivered later.
      if (this.inFlight.size === 0) messages.stop();
      await ended;
    }
  }

  /**
   * Messages one pull asks for, never more than the held work leaves room for. One at a time:
   * one per free slot, up to `batch`. With a batch handler: `batch` per free slot and `batch`
   * more, so that the group a slot takes next has already come (and is a whole one) rather than
   * being pulled once the slot frees: fewer pulls and fuller groups. With heartbeats, one group
   * (a message waiting for a slot gets none).
   */
  private pullSize(): number {
    const free = this.concurrency - this.inFlight.size;
    let wanted = Math.min(this.batchSize, free);
    if (this.options.handleBatch) {
      wanted = this.options.heartbeat ? this.batchSize : (free + 1) * this.batchSize;
    }
    return Math.min(wanted, this.weights?.pullSize() ?? Number.POSITIVE_INFINITY);
  }

  /** The group less the messages the handler ignores (see `ignores`), acknowledged here. */
  private withoutIgnored(group: PulledMessage[]): PulledMessage[] {
    const { ignores } = this.options;
    if (!ignores) return group;
    return group.filter((message) => {
      if (!ignored(ignores, message.data)) return true;
      message.ack();
      return false;
    });
  }

  private startGroup(group: PulledMessage[]): void {
    const abort = new AbortController();
    const heartbeat = this.options.heartbeat ? this.startHeartbeat(group) : undefined;
    const held = this.hold(group);
    const report: ProgressReport = (message, units) => {
      held.get(message)?.progress(units);
      this.slotFreed?.();
    };
    const entry: InFlight = {
      abort,
      done: deliverBatch(group, this.options, abort.signal, report).then(() => {
        clearInterval(heartbeat);
        for (const message of held.values()) message.settled();
        this.inFlight.delete(entry);
        if (this.stopping && this.inFlight.size === 0) this.batch?.stop();
        this.slotFreed?.();
      }),
    };
    this.inFlight.add(entry);
  }

  private startHeartbeat(group: readonly PulledMessage[]): NodeJS.Timeout {
    const ackWaitMs = this.options.ackWaitMs ?? DURABLE_CONSUMER_DEFAULTS.ackWaitMs;
    const timer = setInterval(
      () => group.forEach((message) => message.working()),
      Math.max(Math.floor(ackWaitMs / 3), MIN_HEARTBEAT_MS),
    );
    timer.unref();
    return timer;
  }

  /** The group's messages as held work, by message (none without `holding`). */
  private hold(group: readonly PulledMessage[]): Map<PulledMessage, HeldMessage> {
    const held = new Map<PulledMessage, HeldMessage>();
    const { weights } = this;
    const weigh = this.options.holding?.weigh;
    if (!weights || !weigh) return held;
    for (const message of group) {
      held.set(message, new HeldMessage(weights, messageWeight(weigh, message.data)));
    }
    return held;
  }

  /** Waits (bounded by stop) until a slot is free. */
  private async waitForSlot(): Promise<void> {
    await this.waitUntil(() => this.inFlight.size < this.concurrency);
  }

  /** Waits (bounded by stop) until a slot is free and the held work leaves room for more. */
  private async waitForRoom(): Promise<void> {
    await this.waitUntil(
      () => this.inFlight.size < this.concurrency && !(this.weights?.full ?? false),
    );
  }

  private async waitUntil(ready: () => boolean): Promise<void> {
    while (!ready() && !this.stopping) {
      await new Promise<void>((resolve) => (this.slotFreed = resolve));
      this.slotFreed = undefined;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.resume(), ms);
      this.pause = {
        timer,
        resume: () => {
          clearTimeout(timer);
          this.pause = undefined;
          resolve();
        },
      };
    });
  }

  private resume(): void {
    this.pause?.resume();
  }
}

/** Beyond its expiry on our clock, how long the server may still hold a pull open. */
const PULL_EXPIRY_MARGIN_MS = 250;

/**
 * When a stopping replica's unstarted messages should come back. The server hands a message given
 * back to a pull still waiting for more, and this replica's pull, stopped, no longer reads it:
 * it would stay there until its ack wait. So: at once when the pull brought all it asked for
 * (nothing of it is open), else once the pull has expired.
 */
export function handBackDelayMs(received: number, asked: number, pullEndsBy: number): number {
  if (received >= asked) return 0;
  return Math.max(0, pullEndsBy - Date.now()) + PULL_EXPIRY_MARGIN_MS;
}

/** Whether `ignores` passes the payload; a predicate that throws takes the message. */
function ignored(ignores: (data: Uint8Array) => boolean, data: Uint8Array): boolean {
  try {
    return ignores(data);
  } catch {
    return false;
  }
}

/** A message's weight by `weigh`; 1 when it cannot tell (an unreadable payload settles alone). */
function messageWeight(weigh: (data: Uint8Array) => number, data: Uint8Array): number {
  try {
    const weight = weigh(data);
    return Number.isFinite(weight) && weight >= 1 ? Math.ceil(weight) : 1;
  } catch {
    return 1;
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

/** Whether the promise settled within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return result;
}
