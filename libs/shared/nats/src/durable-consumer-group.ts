import type { StreamSubject } from '@envoi/contracts-core';
import type { NatsConnection } from 'nats';

import {
  type DurableConsumer,
  type DurableConsumerOptions,
  exponentialBackoff,
  startDurableConsumer,
} from './jetstream-consumer';

/** The settings of a service's EVENTS consumers (EventConsumerServiceEnv carries them). */
export interface EventConsumerSettings {
  EVENTS_BATCH: number;
  EVENTS_ACK_WAIT_MS: number;
  EVENTS_RETRY_MS: number;
  SHUTDOWN_GRACE_MS: number;
}

export interface DurableConsumerGroupOptions<E> extends Pick<
  DurableConsumerOptions<E>,
  'handle' | 'handleBatch' | 'logger'
> {
  connection: NatsConnection;
  /**
   * Durable name and subject of each consumer: one per subject (nats-server 2.9 gives a consumer
   * a single filter subject), each shared by every replica of the service.
   */
  durables: ReadonlyArray<readonly [string, StreamSubject<E>]>;
  settings: EventConsumerSettings;
}

/** Redeliveries of an event whose handling failed back off up to this long. */
const MAX_RETRY_DELAY_MS = 60_000;

/**
 * A service's durable consumers of the EVENTS stream with one handler (the durable counterpart of
 * @EventPattern handlers), configured from its EVENTS_* settings: started together, ready when
 * every consumer exists, stopped together, letting the events in hand finish within
 * SHUTDOWN_GRACE_MS (at least one second).
 */
export class DurableConsumerGroup {
  private constructor(
    private readonly consumers: readonly DurableConsumer[],
    private readonly settings: EventConsumerSettings,
  ) {}

  static start<E>(options: DurableConsumerGroupOptions<E>): DurableConsumerGroup {
    const { settings } = options;
    const consumers = options.durables.map(([durable, subject]) =>
      startDurableConsumer<E>({
        connection: options.connection,
        subject,
        durable,
        handle: options.handle,
        ...(options.handleBatch ? { handleBatch: options.handleBatch } : {}),
        logger: options.logger,
        batch: settings.EVENTS_BATCH,
        ackWaitMs: settings.EVENTS_ACK_WAIT_MS,
        retryDelayMs: exponentialBackoff(settings.EVENTS_RETRY_MS, MAX_RETRY_DELAY_MS),
      }),
    );
    return new DurableConsumerGroup(consumers, settings);
  }

  /** Resolves once every durable consumer exists (each waits for the stream to be created). */
  async ready(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.ready));
  }

  async stop(): Promise<void> {
    const timeoutMs = Math.max(this.settings.SHUTDOWN_GRACE_MS, 1_000);
    await Promise.all(this.consumers.map((consumer) => consumer.stop(timeoutMs)));
  }
}
