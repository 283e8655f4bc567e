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

/**
 * Handles the delivery events of the EVENTS stream that can carry a recipient's bounce or
 * failure: hard bounces and permanent failures suppress that recipient for the sending domain.
 * Starts once the app is up; stops, letting the events in hand finish, before the bus
 * connection and the database pool close.
 */
@Injectable()
export class DeliveryEventsController implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DeliveryEventsController.name);
  private consumers: DurableConsumerGroup | undefined;

  constructor(
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: SuppressionsConfig,
    private readonly automatic: AutomaticSuppressionsService,
  ) {}

  onApplicationBootstrap(): void {
    this.consumers = DurableConsumerGroup.start<unknown>({
      connection: this.connection,
      durables: SUPPRESSING_EVENT_DURABLES,
      settings: this.config,
      handle: async (event) => {
        await this.automatic.handle(toSuppressionDecision(event));
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
