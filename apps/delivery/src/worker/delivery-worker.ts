import type { DeliveryJob } from '@envoi/contracts-messages';
import { MessagesStreamSubjects } from '@envoi/contracts-messages';
import {
  consumerConfigChanges,
  defaultRetryDelay,
  durableConsumerConfig,
  NATS_CONNECTION,
  trackConsumer,
} from '@envoi/shared-nats';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { type Consumer, type JsMsg, type NatsConnection, NatsError } from 'nats';

import { DeliveryConfig } from '../delivery.config';
import { SmtpPool } from '../smtp/smtp-pool';
import { DeliveryService, type Settlement } from './delivery.service';

/** The durable consumer every replica shares. */
export const DELIVERY_DURABLE = 'delivery-workers';

const CONSUMER_NOT_FOUND = 10014;
const PULL_EXPIRES_MS = 5_000;
const SETUP_RETRY_MAX_MS = 5_000;
/** After the grace period, how long aborted sessions get to hand their jobs back. */
const ABORT_SETTLE_MS = 5_000;

const decoder = new TextDecoder();

/** A job as published, or null when it is not one (dropped: no retry can help). */
export function decodeJob(data: Uint8Array): DeliveryJob | null {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch {
    return null;
  }
  const job = value as Partial<DeliveryJob> | null;
  const attempt = job?.attempt;
  if (
    !job ||
    typeof job.message_id !== 'string' ||
    !/^[0-9a-f-]{36}$/i.test(job.message_id) ||
    typeof job.account_id !== 'string' ||
    typeof attempt !== 'number' ||
    !Number.isInteger(attempt) ||
    attempt < 1
  ) {
    return null;
  }
  return { message_id: job.message_id, account_id: job.account_id, attempt };
}

/**
 * The delivery workers of one replica: pull jobs from the DELIVERY work queue (a durable pull
 * consumer shared by every replica, explicit acks) and work on up to DELIVERY_CONCURRENCY at
 * once. While a job runs its ack deadline is pushed back ("in progress" every third of the ack
 * wait), so a long SMTP session is never handed to a second worker; a worker that dies stops
 * doing that and its job goes to another after the ack wait. On shutdown it stops pulling, lets
 * the sessions in flight finish for SHUTDOWN_GRACE_MS, then aborts the rest, which hand their
 * jobs back at once; finally it closes the SMTP connections.
 */
@Injectable()
export class DeliveryWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveryWorker.name);
  private readonly inFlight = new Map<JsMsg, { abort: AbortController; done: Promise<void> }>();
  private readonly shutdown = new AbortController();
  private loop: Promise<void> | undefined;
  private markReady!: () => void;
  private slotFreed: (() => void) | undefined;
  private fetching: { stop(): void } | undefined;
  /** The consumer exists on the server and the last setup or pull did not fail. */
  private attached = false;
  /** Resolves once the consumer exists (or the worker stopped before). */
  readonly ready = new Promise<void>((resolve) => (this.markReady = resolve));

  constructor(
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: DeliveryConfig,
    private readonly delivery: DeliveryService,
    private readonly pool: SmtpPool,
  ) {}

  onApplicationBootstrap(): void {
    trackConsumer(this.connection, {
      name: DELIVERY_DURABLE,
      attached: () => this.attached && !this.shutdown.signal.aborted,
    });
    this.loop = this.run().finally(() => this.markReady());
  }

  /** Jobs being worked on now. */
  get busy(): number {
    return this.inFlight.size;
  }

  async onModuleDestroy(): Promise<void> {
    await this.stop();
  }

  async stop(): Promise<void> {
    if (this.shutdown.signal.aborted) return;
    this.shutdown.abort();
    this.markReady();
    this.fetching?.stop();
    this.slotFreed?.();
    await this.loop;
    const inFlight = [...this.inFlight.values()];
    if (inFlight.length > 0) {
      this.logger.log(`stopping: waiting for ${inFlight.length} job(s) in flight`);
      const finished = await within(
        Promise.all(inFlight.map((entry) => entry.done)),
        this.config.SHUTDOWN_GRACE_MS,
      );
      if (!finished) {
        const left = [...this.inFlight.values()];
        this.logger.warn(`stopping: aborting ${left.length} job(s) after the grace period`);
        for (const entry of left) entry.abort.abort();
        await within(Promise.all(left.map((entry) => entry.done)), ABORT_SETTLE_MS);
      }
    }
    this.pool.close();
  }

  private async run(): Promise<void> {
    let consumer: Consumer | undefined;
    let failures = 0;
    while (!this.shutdown.signal.aborted && !this.connection.isClosed()) {
      try {
        consumer ??= await this.setup();
        this.attached = true;
        this.markReady();
        await this.waitForSlot();
        if (this.shutdown.signal.aborted) break;
        await this.pull(consumer, this.config.DELIVERY_CONCURRENCY - this.inFlight.size);
        failures = 0;
      } catch (error) {
        this.attached = false;
        if (this.shutdown.signal.aborted || this.connection.isClosed()) break;
        consumer = undefined;
        const delay = Math.min(250 * 2 ** Math.min(failures++, 10), SETUP_RETRY_MAX_MS);
        this.logger.warn(`delivery jobs: ${String(error)}; trying again in ${delay} ms`);
        await this.sleep(delay);
      }
    }
  }

  private async setup(): Promise<Consumer> {
    const subject = MessagesStreamSubjects.deliveryJobs;
    const jsm = await this.connection.jetstreamManager();
    const wanted = durableConsumerConfig({
      subject,
      durable: DELIVERY_DURABLE,
      ackWaitMs: this.config.DELIVERY_ACK_WAIT_MS,
      maxDeliver: -1,
    });
    let existing;
    try {
      existing = (await jsm.consumers.info(subject.stream, DELIVERY_DURABLE)).config;
    } catch (error) {
      if (!(error instanceof NatsError && error.api_error?.err_code === CONSUMER_NOT_FOUND)) {
        throw error;
      }
    }
    if (existing === undefined) {
      await jsm.consumers.add(subject.stream, wanted);
    } else {
      const changes = consumerConfigChanges(existing, wanted);
      if (Object.keys(changes).length > 0) {
        await jsm.consumers.update(subject.stream, DELIVERY_DURABLE, changes);
      }
    }
    return this.connection.jetstream().consumers.get(subject.stream, DELIVERY_DURABLE);
  }

  /** Takes up to `count` jobs; each starts as soon as it arrives. */
  private async pull(consumer: Consumer, count: number): Promise<void> {
    const messages = await consumer.fetch({ max_messages: count, expires: PULL_EXPIRES_MS });
    this.fetching = messages;
    try {
      if (this.shutdown.signal.aborted) messages.stop();
      for await (const message of messages) {
        if (this.shutdown.signal.aborted) {
          // Taken but not started: another replica (or the next start) gets it at once.
          message.nak();
          continue;
        }
        this.start(message);
      }
    } finally {
      this.fetching = undefined;
    }
  }

  private start(message: JsMsg): void {
    const abort = new AbortController();
    const heartbeat = setInterval(
      () => message.working(),
      Math.max(Math.floor(this.config.DELIVERY_ACK_WAIT_MS / 3), 100),
    );
    heartbeat.unref();
    const done = this.handle(message, abort.signal).finally(() => {
      clearInterval(heartbeat);
      this.inFlight.delete(message);
      this.slotFreed?.();
    });
    this.inFlight.set(message, { abort, done });
  }

  /** Runs one job and settles its message; never throws. */
  private async handle(message: JsMsg, signal: AbortSignal): Promise<void> {
    const job = decodeJob(message.data);
    const what = `job #${message.info.streamSequence}`;
    if (!job) {
      this.logger.error(`${what} is not a delivery job, dropped`);
      message.term();
      return;
    }
    let settlement: Settlement;
    try {
      settlement = await this.delivery.process(job, signal);
    } catch (error) {
      const delayMs = defaultRetryDelay(message.info.deliveryCount);
      this.logger.warn(
        `${what} (${job.message_id} attempt ${job.attempt}) failed, retried in ${delayMs} ms: ${String(error)}`,
      );
      message.nak(delayMs);
      return;
    }
    switch (settlement.kind) {
      case 'ack':
        this.logger.debug(`${what} ${job.message_id}#${job.attempt}: ${settlement.note}`);
        message.ack();
        return;
      case 'nak':
        this.logger.debug(`${what} ${job.message_id}#${job.attempt}: ${settlement.note}`);
        message.nak(settlement.delayMs);
        return;
      case 'term':
        this.logger.error(`${what} ${job.message_id}#${job.attempt} dropped: ${settlement.note}`);
        message.term();
        return;
    }
  }

  private async waitForSlot(): Promise<void> {
    while (
      this.inFlight.size >= this.config.DELIVERY_CONCURRENCY &&
      !this.shutdown.signal.aborted
    ) {
      await new Promise<void>((resolve) => (this.slotFreed = resolve));
      this.slotFreed = undefined;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.shutdown.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
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
