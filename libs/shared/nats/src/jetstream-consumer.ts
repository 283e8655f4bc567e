import type { StreamSubject } from '@envoi/contracts-core';
import {
  AckPolicy,
  type Consumer,
  type ConsumerConfig,
  type ConsumerMessages,
  DeliverPolicy,
  nanos,
  type NatsConnection,
  NatsError,
} from 'nats';

/** Where and how often a message was delivered, for logs and idempotency keys. */
export interface StreamDelivery {
  subject: string;
  /** The message's position in the stream: unique per message. */
  streamSequence: number;
  /** 1 on the first delivery. */
  deliveryCount: number;
  /** The publisher's `Nats-Msg-Id` (an outbox event's id), when it set one. */
  msgId: string | undefined;
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
  handle(event: E, delivery: StreamDelivery): Promise<void>;
  logger: DurableConsumerLogger;
  /**
   * Messages per pull, handled one after the other in stream order. Across replicas, and once a
   * failed message is redelivered after later ones, there is no order: handlers must not need one.
   */
  batch?: number;
  /** Unacknowledged this long after delivery, a message is delivered again. */
  ackWaitMs?: number;
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
  /**
   * Stops pulling, lets the message in hand finish and hands back the rest of the batch for
   * immediate redelivery. Waits at most `timeoutMs`; whatever is still unacknowledged then is
   * redelivered after the ack wait.
   */
  stop(timeoutMs?: number): Promise<void>;
}

export const DURABLE_CONSUMER_DEFAULTS = {
  batch: 32,
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
  readonly headers?: { get(name: string): string } | undefined;
  readonly info: { readonly deliveryCount: number; readonly streamSequence: number };
  ack(): void;
  nak(millis?: number): void;
  /** Never called with a reason: servers before 2.11 ignore a `+TERM` that carries one. */
  term(): void;
}

const decoder = new TextDecoder();

function decodeJson<E>(data: Uint8Array): E {
  try {
    return JSON.parse(decoder.decode(data)) as E;
  } catch (error) {
    throw new UnprocessableMessageError(`not JSON: ${String(error)}`);
  }
}

export type DeliveryOutcome = 'acked' | 'retried' | 'terminated';

/**
 * Hands one message to the handler and settles it: ack on success; nak with a delay on failure;
 * term when it is unprocessable or has used up its deliveries. Never throws.
 */
export async function deliverMessage<E>(
  message: PulledMessage,
  options: Pick<
    DurableConsumerOptions<E>,
    'handle' | 'logger' | 'decode' | 'maxDeliver' | 'retryDelayMs' | 'durable'
  >,
): Promise<DeliveryOutcome> {
  const delivery: StreamDelivery = {
    subject: message.subject,
    streamSequence: message.info.streamSequence,
    deliveryCount: message.info.deliveryCount,
    msgId: message.headers?.get('Nats-Msg-Id') || undefined,
  };
  const what = `${options.durable}: ${delivery.subject} #${delivery.streamSequence}`;
  try {
    const event = (options.decode ?? decodeJson<E>)(message.data);
    await options.handle(event, delivery);
  } catch (error) {
    if (error instanceof UnprocessableMessageError) {
      options.logger.error(`${what} is unprocessable, dropped: ${error.message}`);
      message.term();
      return 'terminated';
    }
    const maxDeliver = options.maxDeliver ?? DURABLE_CONSUMER_DEFAULTS.maxDeliver;
    if (maxDeliver > 0 && delivery.deliveryCount >= maxDeliver) {
      options.logger.error(
        `${what} failed on its last delivery (${delivery.deliveryCount}), dropped: ${String(error)}`,
      );
      message.term();
      return 'terminated';
    }
    const delay = (options.retryDelayMs ?? defaultRetryDelay)(delivery.deliveryCount);
    options.logger.warn(
      `${what} failed (delivery ${delivery.deliveryCount}), redelivered in ${delay} ms: ${String(error)}`,
    );
    message.nak(delay);
    return 'retried';
  }
  message.ack();
  return 'acked';
}

/**
 * Consumes a stream subject with a durable pull consumer shared by every replica of a service:
 * creates or updates the consumer, pulls bounded batches, and settles each message through
 * `deliverMessage`. Setup and pull failures (stream not created yet, JetStream unavailable,
 * consumer deleted) are logged and retried with a capped backoff; the loop ends on stop() or when
 * the connection closes.
 */
export function startDurableConsumer<E>(options: DurableConsumerOptions<E>): DurableConsumer {
  return new DurableConsumerLoop(options);
}

class DurableConsumerLoop<E> implements DurableConsumer {
  readonly ready: Promise<void>;
  private readonly done: Promise<void>;
  private markReady!: () => void;
  private stopping = false;
  private handling = false;
  private batch: ConsumerMessages | undefined;
  private pause: { timer: NodeJS.Timeout; resume: () => void } | undefined;
  private readonly setupBackoff: (attempt: number) => number;

  constructor(private readonly options: DurableConsumerOptions<E>) {
    const expiresMs = options.expiresMs ?? DURABLE_CONSUMER_DEFAULTS.expiresMs;
    if (expiresMs < MIN_EXPIRES_MS) throw new Error(`expiresMs must be at least ${MIN_EXPIRES_MS}`);
    const batch = options.batch ?? DURABLE_CONSUMER_DEFAULTS.batch;
    if (!Number.isInteger(batch) || batch < 1) throw new Error('batch must be a positive integer');
    this.setupBackoff = exponentialBackoff(
      FIRST_SETUP_RETRY_MS,
      options.setupRetryMaxMs ?? DURABLE_CONSUMER_DEFAULTS.setupRetryMaxMs,
    );
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    // A loop that ends without ever being ready (the connection closed) must not leave waiters hanging.
    this.done = this.run().finally(() => this.markReady());
  }

  async stop(timeoutMs = DEFAULT_STOP_TIMEOUT_MS): Promise<void> {
    this.stopping = true;
    this.markReady();
    this.resume();
    // While a handler runs, the loop ends the pull itself once it is done (see pullBatch).
    if (!this.handling) this.batch?.stop();
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      this.done.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!stopped) {
      // Leave the hung handler; its open pull must not take in (and strand) more messages.
      this.batch?.stop();
      this.options.logger.warn(
        `${this.options.durable}: still handling a message after ${timeoutMs} ms; stopping anyway (it will be redelivered)`,
      );
    }
  }

  private async run(): Promise<void> {
    const { connection, logger, durable } = this.options;
    let consumer: Consumer | undefined;
    let failures = 0;
    while (!this.stopping && !connection.isClosed()) {
      try {
        consumer ??= await this.setup();
        this.markReady();
        await this.pullBatch(consumer);
        failures = 0;
      } catch (error) {
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

  private async pullBatch(consumer: Consumer): Promise<void> {
    const messages = await consumer.fetch({
      max_messages: this.options.batch ?? DURABLE_CONSUMER_DEFAULTS.batch,
      expires: this.options.expiresMs ?? DURABLE_CONSUMER_DEFAULTS.expiresMs,
    });
    this.batch = messages;
    try {
      if (this.stopping) messages.stop();
      for await (const message of messages) {
        if (this.stopping) {
          // Fetched but not started: another replica (or the next start) takes it at once.
          message.nak();
          continue;
        }
        this.handling = true;
        try {
          await deliverMessage(message, this.options);
        } finally {
          this.handling = false;
        }
        if (this.stopping) messages.stop();
      }
    } finally {
      this.batch = undefined;
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
