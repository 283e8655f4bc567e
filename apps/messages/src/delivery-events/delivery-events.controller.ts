import type { StreamSubject } from '@envoi/contracts-core';
import { DeliveryStreamSubjects } from '@envoi/contracts-delivery';
import { DurableConsumerGroup, NATS_CONNECTION } from '@envoi/shared-nats';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { NatsConnection } from 'nats';

import { MessagesConfig } from '../messages.config';
import { DeliveryEventsService } from './delivery-events.service';
import { toDeliveryOutcome } from './delivery-outcome';

/**
 * One durable consumer per delivery event subject, each shared by every replica of this service.
 * nats-server 2.9 gives a consumer a single filter subject, and `events.message.>` would also
 * carry `message.reception` (and the opens and clicks to come), so each subject gets its own.
 * Consumers (and replicas) interleave freely: the status machine needs no order.
 */
export const DELIVERY_EVENT_DURABLES: ReadonlyArray<[string, StreamSubject<unknown>]> = [
  ['messages-message-delivered', DeliveryStreamSubjects.delivered],
  ['messages-message-transient-error', DeliveryStreamSubjects.transientError],
  ['messages-message-failed', DeliveryStreamSubjects.failed],
  ['messages-message-bounced', DeliveryStreamSubjects.bounced],
  ['messages-message-suppressed', DeliveryStreamSubjects.suppressed],
];

/**
 * Feeds the status machine from the delivery events of the EVENTS stream (the durable
 * counterpart of @EventPattern handlers): validates each event and applies it once, the events
 * that arrived together (up to EVENTS_BATCH) in one transaction. Starts once
 * the app is up; stops, letting the events in hand finish, before the bus connection and the
 * database pool close.
 */
@Injectable()
export class DeliveryEventsController implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveryEventsController.name);
  private consumers: DurableConsumerGroup | undefined;

  constructor(
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: MessagesConfig,
    private readonly events: DeliveryEventsService,
  ) {}

  onApplicationBootstrap(): void {
    this.consumers = DurableConsumerGroup.start<unknown>({
      connection: this.connection,
      durables: DELIVERY_EVENT_DURABLES,
      settings: this.config,
      handle: async (event) => {
        await this.events.apply(toDeliveryOutcome(event));
      },
      // What arrived together, in one transaction. Should it fail (an unprocessable event, a
      // database error one event causes), each event goes through `handle` on its own.
      handleBatch: async (items) => {
        await this.events.applyBatch(items.map(({ event }) => toDeliveryOutcome(event)));
      },
      logger: this.logger,
    });
  }

  /** Resolves once every durable consumer exists (each waits for the stream to be created). */
  ready(): Promise<void> {
    return this.consumers?.ready() ?? Promise.resolve();
  }

  async onModuleDestroy(): Promise<void> {
    await this.consumers?.stop();
  }
}
