import type { StreamSubject } from '@envoi/contracts-core';
import { DeclaredMethods } from '@envoi/shared-jobs';
import {
  Inject,
  Injectable,
  type InjectionToken,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { JSONCodec, type NatsConnection, type Subscription } from 'nats';

import {
  decodeJson,
  deliverMessage,
  type DeliveryOutcome,
  type DurableConsumer,
  type DurableConsumerOptions,
  exponentialBackoff,
  type PulledMessage,
  startDurableConsumer,
  type StreamDelivery,
} from '../jetstream-consumer';
import { NATS_CONNECTION } from '../nats.module';
import {
  DEAD_LETTER_ADMIN_SUBJECTS,
  DEAD_LETTER_STORE,
  type DeadLetterListReply,
  type DeadLetterReplayReply,
  type DeadLetterStore,
  deadLetterView,
  type StoredDeadLetter,
} from './dead-letters';
import { type DeclaredDurable, streamHandlerProblems } from './handler-check';
import {
  type ConsumerTuning,
  STREAM_CONSUMER,
  type StreamBatchHandlerMethod,
  type StreamConsumerDeclaration,
  type StreamConsumerMetadata,
  type StreamHandlerMethod,
} from './stream-consumer.decorator';

/** The settings of a service's EVENTS consumers (EventConsumerServiceEnv carries them). */
export interface EventConsumerSettings {
  EVENTS_BATCH: number;
  EVENTS_ACK_WAIT_MS: number;
  EVENTS_RETRY_MS: number;
  SHUTDOWN_GRACE_MS: number;
}

export interface StreamConsumersOptions {
  /** The service's name, in the answers to the operator's dead-letter requests. */
  service: string;
  /** Every stream subject the service consumes: each must have exactly one handler. */
  consumes: ReadonlyArray<StreamSubject<unknown>>;
  /**
   * The provider holding the service's settings (its config class): declarations read their
   * tuning from it, and the EVENTS_* settings are the defaults.
   */
  settings?: InjectionToken;
}

export const STREAM_CONSUMERS_OPTIONS = Symbol('STREAM_CONSUMERS_OPTIONS');

const MAX_LISTED_DEAD_LETTERS = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A stored dead letter as a message to settle: its handler sees it as its next delivery, in the
 * trace context its stored headers carry (deliverMessage continues it).
 */
function replayedMessage(letter: StoredDeadLetter): PulledMessage {
  return {
    subject: letter.subject,
    data: letter.payload,
    headers: { get: (name) => letter.headers[name] ?? '', keys: () => Object.keys(letter.headers) },
    info: { deliveryCount: letter.deliveries + 1, streamSequence: 0 },
    ack: () => undefined,
    nak: () => undefined,
    term: () => undefined,
    working: () => undefined,
  };
}

/** Redeliveries of a message whose handling failed back off up to this long by default. */
const MAX_RETRY_DELAY_MS = 60_000;
const MIN_STOP_GRACE_MS = 1_000;

/** A discovered handler, bound to its instance, with one durable consumer per subject. */
interface Binding {
  owner: string;
  durables: DeclaredDurable[];
  options: Omit<DurableConsumerOptions<unknown>, 'connection' | 'subject' | 'durable'>;
  tuning: ConsumerTuning;
}

/**
 * The service's stream consumers, found at boot on the provider methods decorated with
 * @StreamConsumer / @StreamBatchConsumer. Boot fails when a consumed subject has no handler or
 * two. Starts them once the app is up; stops them, letting the messages in hand finish, before
 * the bus connection and the database pool close.
 */
@Injectable()
export class StreamConsumers implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private bindings: Binding[] = [];
  private consumers: Array<{ consumer: DurableConsumer; tuning: ConsumerTuning }> = [];
  private stopped: Promise<void> | undefined;
  private adminSubscriptions: Subscription[] = [];
  private readonly logger = new Logger(StreamConsumers.name);

  constructor(
    private readonly methods: DeclaredMethods,
    private readonly moduleRef: ModuleRef,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    @Inject(STREAM_CONSUMERS_OPTIONS) private readonly options: StreamConsumersOptions,
    @Optional() @Inject(DEAD_LETTER_STORE) private readonly deadLetters?: DeadLetterStore,
  ) {}

  onModuleInit(): void {
    this.bindings = this.discover();
    const problems = streamHandlerProblems(
      this.options.consumes,
      this.bindings.flatMap((binding) => binding.durables),
    );
    if (problems.length > 0) {
      throw new Error(`stream consumers: ${problems.join('; ')}`);
    }
  }

  onApplicationBootstrap(): void {
    if (this.deadLetters) this.answerDeadLetterRequests(this.deadLetters);
    this.consumers = this.bindings.flatMap((binding) =>
      binding.durables.map(({ durable, subject }) => ({
        tuning: binding.tuning,
        consumer: startDurableConsumer({
          ...binding.options,
          connection: this.connection,
          durable,
          subject,
        }),
      })),
    );
  }

  /** The durable names and subjects found, for operators and tests. */
  declared(): DeclaredDurable[] {
    return this.bindings.flatMap((binding) => binding.durables);
  }

  /** Resolves once every durable consumer exists (each waits for its stream to be created). */
  async ready(): Promise<void> {
    await Promise.all(this.consumers.map(({ consumer }) => consumer.ready));
  }

  /** Messages being handled now, across the consumers. */
  get busy(): number {
    return this.consumers.reduce((sum, { consumer }) => sum + consumer.busy, 0);
  }

  /**
   * Hands a dead letter to its handler again; once handled, it is removed. Undefined when this
   * service holds no dead letter with that id.
   */
  async replay(id: string): Promise<DeliveryOutcome | undefined> {
    const letter = await this.deadLetters?.find(id);
    if (!letter) return undefined;
    const binding = this.bindings.find((candidate) =>
      candidate.durables.some(({ durable }) => durable === letter.durable),
    );
    if (!binding) throw new Error(`no consumer ${letter.durable} here any more`);
    const outcome = await deliverMessage(replayedMessage(letter), {
      ...binding.options,
      durable: letter.durable,
      // Failing again leaves the dead letter as it is, rather than recording a second one.
      deadLetter: undefined,
      maxDeliver: -1,
      retryDelayMs: () => 0,
    });
    if (outcome === 'acked') await this.deadLetters?.remove(id);
    return outcome;
  }

  /** Stops every consumer (once; later calls wait for the first). */
  stop(): Promise<void> {
    for (const subscription of this.adminSubscriptions.splice(0)) subscription.unsubscribe();
    this.stopped ??= Promise.all(
      this.consumers.map(({ consumer, tuning }) =>
        consumer.stop(
          Math.max(tuning.stopGraceMs ?? MIN_STOP_GRACE_MS, MIN_STOP_GRACE_MS),
          tuning.abortSettleMs,
        ),
      ),
    ).then(() => undefined);
    return this.stopped;
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  private discover(): Binding[] {
    const settings = this.settings();
    return this.methods
      .find<StreamConsumerMetadata>(STREAM_CONSUMER)
      .map(({ declaration, name, owner, call }) =>
        this.bind(declaration, name, owner, call, settings),
      );
  }

  private bind(
    metadata: StreamConsumerMetadata,
    name: string,
    owner: string,
    method: (...args: never[]) => unknown,
    settings: unknown,
  ): Binding {
    const { declaration } = metadata;
    const store = this.deadLetters;
    const tuning = { ...eventDefaults(settings), ...declaration.tuning?.(settings) };
    const retry = tuning.retry;
    const each = method as unknown as StreamHandlerMethod<unknown>;
    const batch = method as unknown as StreamBatchHandlerMethod<unknown>;
    return {
      owner,
      tuning,
      durables: Object.entries(declaration.durables).map(([durable, subject]) => ({
        durable,
        subject,
        handler: name,
      })),
      options: {
        logger: new Logger(owner),
        ...(store
          ? {
              deadLetter: (durable, message, delivery, error) =>
                this.recordDeadLetter(store, durable, message, delivery, error),
            }
          : {}),
        decode: (data) => declaration.decode(decodeJson(data)),
        ...(declaration.ignores ? { ignores: declaration.ignores } : {}),
        handle: metadata.batched ? async (event, delivery) => batch([{ event, delivery }]) : each,
        ...(metadata.batched ? { handleBatch: batch } : {}),
        ...(declaration.heartbeat ? { heartbeat: true } : {}),
        ...holdingOf(declaration, tuning),
        ...definedOnly({
          batch: tuning.batch,
          concurrency: tuning.concurrency,
          ackWaitMs: tuning.ackWaitMs,
          maxDeliver: retry?.maxDeliveries,
          retryDelayMs: retry && exponentialBackoff(retry.firstDelayMs, retry.maxDelayMs),
        }),
      },
    };
  }

  private async recordDeadLetter(
    store: DeadLetterStore,
    durable: string,
    message: PulledMessage,
    delivery: StreamDelivery,
    error: unknown,
  ): Promise<void> {
    const headers: Record<string, string> = {};
    for (const name of message.headers?.keys?.() ?? [])
      headers[name] = message.headers?.get(name) ?? '';
    const stream = this.bindings
      .flatMap((binding) => binding.durables)
      .find((declared) => declared.durable === durable)?.subject.stream;
    try {
      await store.record({
        durable,
        stream: stream ?? '',
        subject: delivery.subject,
        payload: message.data,
        headers,
        error: error instanceof Error ? error.message : String(error),
        deliveries: delivery.deliveryCount,
      });
    } catch (recordError) {
      this.logger.error(`${durable}: could not record a dead letter: ${String(recordError)}`);
    }
  }

  /** One replica of the service answers each request (a queue group per service). */
  private answerDeadLetterRequests(store: DeadLetterStore): void {
    const codec = JSONCodec();
    const queue = `dead-letters-${this.options.service}`;
    const answer = <R>(subject: string, handle: (request: unknown) => Promise<R>) =>
      this.connection.subscribe(subject, {
        queue,
        callback: (error, message) => {
          if (error) return;
          const request = message.data.length > 0 ? codec.decode(message.data) : {};
          handle(request).then(
            (reply) => message.respond(codec.encode(reply)),
            (handleError: unknown) =>
              this.logger.error(`dead letters: ${subject} failed: ${String(handleError)}`),
          );
        },
      });
    this.adminSubscriptions = [
      answer<DeadLetterListReply>(DEAD_LETTER_ADMIN_SUBJECTS.list, async () => ({
        service: this.options.service,
        dead_letters: (await store.list(MAX_LISTED_DEAD_LETTERS)).map(deadLetterView),
      })),
      answer<DeadLetterReplayReply>(DEAD_LETTER_ADMIN_SUBJECTS.replay, async (request) => {
        const id = (request as { id?: unknown }).id;
        const outcome = typeof id === 'string' && UUID.test(id) ? await this.replay(id) : undefined;
        return {
          service: this.options.service,
          found: outcome !== undefined,
          ...(outcome ? { outcome } : {}),
        };
      }),
    ];
  }

  private settings(): unknown {
    if (this.options.settings === undefined) return {};
    return this.moduleRef.get(this.options.settings, { strict: false });
  }
}

/** The cap on held work a declaration asks for (its `weigh` and the tuning's `maxHeldWeight`). */
function holdingOf(
  declaration: StreamConsumerDeclaration<unknown, unknown>,
  tuning: ConsumerTuning,
): Pick<DurableConsumerOptions<unknown>, 'holding'> {
  const { weigh } = declaration;
  const limit = tuning.maxHeldWeight;
  if (!weigh || limit === undefined) return {};
  return { holding: { weigh: (data) => weigh(decodeJson(data)), limit } };
}

/** The tuning an EventConsumerServiceEnv gives every consumer that does not say otherwise. */
function eventDefaults(settings: unknown): ConsumerTuning {
  const events = settings as Partial<EventConsumerSettings>;
  return definedOnly({
    batch: events.EVENTS_BATCH,
    ackWaitMs: events.EVENTS_ACK_WAIT_MS,
    stopGraceMs: events.SHUTDOWN_GRACE_MS,
    retry:
      events.EVENTS_RETRY_MS === undefined
        ? undefined
        : {
            firstDelayMs: events.EVENTS_RETRY_MS,
            maxDelayMs: MAX_RETRY_DELAY_MS,
            maxDeliveries: -1,
          },
  });
}

function definedOnly<T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}
