import { runInTraceContext, traceContextFrom } from '@envoi/shared-observability';
import {
  type MessageHandler,
  type NatsContext,
  type NatsOptions,
  type ReadPacket,
  ServerNats,
} from '@nestjs/microservices';
import type { Msg, NatsConnection, NatsError, Subscription } from 'nats';

import type { NestResponsePacket } from './nest-packet';

export type NatsServerOptions = Required<NatsOptions>['options'];

/** Hands one reply packet of a request to the connection. */
type Publish = (packet: NestResponsePacket<unknown>) => unknown;

/** The most a shutdown round trip (leaving the queue group, flushing replies) may take. */
const ROUND_TRIP_TIMEOUT_MS = 2_000;

/**
 * Nest's NATS server, with a shutdown that drains instead of sleeping. On close it leaves its
 * queue group (NATS routes new requests to other replicas and still delivers what it had already
 * sent here), waits until no message is in flight or `gracePeriodMs` has passed, flushes the
 * replies and closes the connection. An idle service so stops at once, where Nest's own graceful
 * shutdown always sleeps through the whole grace period.
 *
 * Each message is handled in the trace context its headers carry (request id, traceparent,
 * account), so the handler's log lines and onward calls carry it too.
 *
 * A message is in flight from its receipt until its final reply packet has been handed to the
 * connection (requests) or until Nest reports that its handler finished (events).
 */
export class DrainingNatsServer extends ServerNats {
  private readonly inFlight = new InFlight();
  private readonly eventsInFlight = new Map<unknown, () => void>();
  private readonly queueSubscriptions: Subscription[] = [];
  private readonly defaultQueue: string | undefined;
  private connection: NatsConnection | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    options: NatsServerOptions,
    private readonly gracePeriodMs: number,
  ) {
    // Nest's graceful shutdown only unsubscribes and sleeps; close() below does the draining.
    super({ ...options, gracefulShutdown: false });
    this.defaultQueue = options.queue;
    this.setOnProcessingEndHook((_transport, context) => this.finishEvent(context));
  }

  /** Reports the server listening only once NATS has registered its subscriptions. */
  override start(callback: (error?: unknown) => void): void {
    super.start((error?: unknown) => {
      if (error !== undefined || !this.connection) return callback(error);
      this.connection.flush().then(() => callback(), callback);
    });
  }

  /** Subscribes as ServerNats does, keeping the subscriptions and counting each message. */
  override bindEvents(client: NatsConnection): void {
    this.connection = client;
    for (const [channel, handler] of this.getHandlers()) {
      const queue: unknown = handler.extras?.['queue'];
      const subscription = client.subscribe(channel, {
        queue: typeof queue === 'string' ? queue : this.defaultQueue,
        callback: (error, message) => this.receive(channel, error, message),
      });
      this.queueSubscriptions.push(subscription);
    }
  }

  /**
   * A subscribed channel is its handler's own key: found directly, where Nest first tries
   * `JSON.parse` on it (a SyntaxError thrown and caught for every message). Anything else is
   * looked up as Nest does.
   */
  override getHandlerByPattern(pattern: string): MessageHandler | null {
    return this.getHandlers().get(pattern) ?? super.getHandlerByPattern(pattern);
  }

  override getPublisher(message: Msg, id: string, context: NatsContext): Publish {
    const publish: Publish = super.getPublisher(message, id, context);
    const replied = this.inFlight.begin();
    return (packet) => {
      try {
        return publish(packet);
      } catch (error) {
        // Typically a handler that outlived the grace period, answering on a closed connection.
        this.logger.error(`reply on ${message.subject} not sent: ${String(error)}`);
        return undefined;
      } finally {
        if (packet.isDisposed === true || packet.err !== undefined) replied();
      }
    };
  }

  override async handleEvent(
    pattern: string,
    packet: ReadPacket,
    context: NatsContext,
  ): Promise<unknown> {
    // Without a handler Nest only logs the event, and never reports its processing as ended.
    if (!this.getHandlerByPattern(pattern)) return super.handleEvent(pattern, packet, context);
    this.eventsInFlight.set(context, this.inFlight.begin());
    try {
      return await super.handleEvent(pattern, packet, context);
    } catch (error) {
      this.finishEvent(context);
      throw error;
    }
  }

  /** Drains and closes once; a second call waits for the first. */
  override close(): Promise<void> {
    this.closing ??= this.drainAndClose();
    return this.closing;
  }

  private async drainAndClose(): Promise<void> {
    const subscriptions = this.queueSubscriptions.splice(0);
    await settleWithin(
      Promise.allSettled(subscriptions.map((subscription) => subscription.drain())),
      ROUND_TRIP_TIMEOUT_MS,
    );
    if (!(await this.inFlight.idle(this.gracePeriodMs))) {
      this.logger.warn(
        `closing with ${this.inFlight.size} message(s) still in flight after the ${this.gracePeriodMs} ms grace period`,
      );
    }
    // Replies wait in the client's buffer; make sure they reached the server before closing.
    const connection = this.connection;
    this.connection = undefined;
    if (connection && !connection.isClosed()) {
      await settleWithin(connection.flush(), ROUND_TRIP_TIMEOUT_MS);
    }
    await super.close();
  }

  private receive(channel: string, error: NatsError | null, message: Msg): void {
    if (error) {
      this.logger.error(error);
      return;
    }
    const handled = this.inFlight.begin();
    const context = traceContextFrom((name) => message.headers?.get(name) || undefined);
    runInTraceContext(context, () => this.handleMessage(channel, message)).then(
      handled,
      (handlingError: unknown) => {
        handled();
        this.logger.error(handlingError);
      },
    );
  }

  private finishEvent(context: unknown): void {
    const finished = this.eventsInFlight.get(context);
    this.eventsInFlight.delete(context);
    finished?.();
  }
}

/** Counts the messages being handled and tells when none is. */
class InFlight {
  private count = 0;
  private waiters: Array<() => void> = [];

  get size(): number {
    return this.count;
  }

  /** Counts one more; the returned function (idempotent) counts it as finished. */
  begin(): () => void {
    this.count += 1;
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      this.count -= 1;
      if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
    };
  }

  /** Resolves true once nothing is in flight, or false if `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(wake);
    });
  }
}

/** Waits for `promise` to settle, at most `timeoutMs`; its outcome is ignored. */
async function settleWithin(promise: Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  try {
    await Promise.race([promise.then(noop, noop), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function noop(): void {
  // the outcome does not matter
}
