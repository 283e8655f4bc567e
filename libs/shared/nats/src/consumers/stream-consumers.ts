import type { StreamSubject } from '@envoi/contracts-core';
import {
  Inject,
  Injectable,
  type InjectionToken,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, ModuleRef, Reflector } from '@nestjs/core';
import type { NatsConnection } from 'nats';

import {
  decodeJson,
  type DurableConsumer,
  type DurableConsumerOptions,
  exponentialBackoff,
  startDurableConsumer,
} from '../jetstream-consumer';
import { NATS_CONNECTION } from '../nats.module';
import { type DeclaredDurable, streamHandlerProblems } from './handler-check';
import {
  type ConsumerTuning,
  STREAM_CONSUMER,
  type StreamBatchHandlerMethod,
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
  /** Every stream subject the service consumes: each must have exactly one handler. */
  consumes: ReadonlyArray<StreamSubject<unknown>>;
  /**
   * The provider holding the service's settings (its config class): declarations read their
   * tuning from it, and the EVENTS_* settings are the defaults.
   */
  settings?: InjectionToken;
}

export const STREAM_CONSUMERS_OPTIONS = Symbol('STREAM_CONSUMERS_OPTIONS');

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

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly moduleRef: ModuleRef,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    @Inject(STREAM_CONSUMERS_OPTIONS) private readonly options: StreamConsumersOptions,
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

  /** Stops every consumer (once; later calls wait for the first). */
  stop(): Promise<void> {
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
    const bindings: Binding[] = [];
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!wrapper.isDependencyTreeStatic() || typeof instance !== 'object' || instance === null) {
        continue;
      }
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const handler = (instance as Record<string, unknown>)[method];
        if (typeof handler !== 'function') continue;
        const metadata = this.reflector.get<StreamConsumerMetadata | undefined>(
          STREAM_CONSUMER,
          handler,
        );
        if (!metadata) continue;
        const owner = instance.constructor.name;
        const bound = (handler as (...args: never[]) => unknown).bind(instance);
        bindings.push(this.bind(metadata, `${owner}.${method}`, owner, bound, settings));
      }
    }
    return bindings;
  }

  private bind(
    metadata: StreamConsumerMetadata,
    name: string,
    owner: string,
    method: (...args: never[]) => unknown,
    settings: unknown,
  ): Binding {
    const { declaration } = metadata;
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
        decode: (data) => declaration.decode(decodeJson(data)),
        handle: metadata.batched ? async (event, delivery) => batch([{ event, delivery }]) : each,
        ...(metadata.batched ? { handleBatch: batch } : {}),
        ...(declaration.heartbeat ? { heartbeat: true } : {}),
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

  private settings(): unknown {
    if (this.options.settings === undefined) return {};
    return this.moduleRef.get(this.options.settings, { strict: false });
  }
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
