import type { StreamSubject } from '@envoi/contracts-core';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import {
  type DurableConsumer,
  exponentialBackoff,
  NATS_CONNECTION,
  startDurableConsumer,
} from '@envoi/shared-nats';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { NatsConnection } from 'nats';

import { SuppressionsConfig } from '../suppressions.config';
import { AutomaticSuppressionsService } from './automatic-suppressions.service';
import { toSuppressionDecision } from './delivery-outcome';

/**
 * The durable consumers every replica of this service shares: one per subject (nats-server 2.9
 * gives a consumer a single filter subject).
 */
export const SUPPRESSING_EVENT_DURABLES: ReadonlyArray<[string, StreamSubject<unknown>]> = [
  ['suppressions-message-bounced', DeliveryStreamSubjects.bounced],
  ['suppressions-message-failed', DeliveryStreamSubjects.failed],
  // A conversation message's recipients can bounce or fail while another is delivered or deferred.
  ['suppressions-message-delivered', DeliveryStreamSubjects.delivered],
  ['suppressions-message-transient-error', DeliveryStreamSubjects.transientError],
];

/** Redeliveries of a failed event back off up to this long. */
const MAX_RETRY_DELAY_MS = 60_000;

/**
 * Handles the delivery events of the EVENTS stream that can carry a recipient's bounce or
 * failure: hard bounces and permanent failures suppress that recipient for the sending domain.
 * Starts once the app is up; stops, letting the events in hand finish, before the bus
 * connection and the database pool close.
 */
@Injectable()
export class DeliveryEventsController implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveryEventsController.name);
  private consumers: DurableConsumer[] = [];

  constructor(
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: SuppressionsConfig,
    private readonly automatic: AutomaticSuppressionsService,
  ) {}

  onApplicationBootstrap(): void {
    this.consumers = SUPPRESSING_EVENT_DURABLES.map(([durable, subject]) =>
      startDurableConsumer<unknown>({
        connection: this.connection,
        subject,
        durable,
        handle: async (event) => {
          await this.automatic.handle(toSuppressionDecision(event));
        },
        logger: this.logger,
        batch: this.config.EVENTS_BATCH,
        ackWaitMs: this.config.EVENTS_ACK_WAIT_MS,
        retryDelayMs: exponentialBackoff(this.config.EVENTS_RETRY_MS, MAX_RETRY_DELAY_MS),
      }),
    );
  }

  /** Resolves once every durable consumer exists (each waits for the stream to be created). */
  async ready(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.ready));
  }

  async onModuleDestroy(): Promise<void> {
    const timeoutMs = Math.max(this.config.SHUTDOWN_GRACE_MS, 1_000);
    await Promise.all(this.consumers.map((consumer) => consumer.stop(timeoutMs)));
  }
}
