import { randomUUID } from 'node:crypto';

import type { RoutedMailData } from '@envoi/contracts-routes';
import {
  NATS_CONNECTION,
  readUpload,
  UnprocessableMessageError,
  UploadUnavailableError,
} from '@envoi/shared-nats';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource, In } from 'typeorm';

import { RouteEntity } from '../routes/route.entity';
import { RouteStreamFeed } from '../stream/route-stream-feed';
import { planDeliveries } from './delivery-plan';
import { InboundMessageEntity } from './inbound-message.entity';
import { RouteDeliveryEntity } from './route-delivery.entity';
import { RouteDeliveryWorker } from './route-delivery-worker.service';

/**
 * Takes a routed message from the MX: copies it from its spool (which expires) and plans its
 * calls, in one transaction, once per inbound id (a redelivered event changes nothing). The
 * stream event is acknowledged only after this commits: accepted mail is never lost.
 */
@Injectable()
export class RoutedMailIntake {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly worker: RouteDeliveryWorker,
    private readonly streams: RouteStreamFeed,
  ) {}

  async accept(mail: RoutedMailData): Promise<void> {
    const known = await this.dataSource.manager.existsBy(InboundMessageEntity, {
      id: mail.inbound_id,
    });
    if (known) return;
    const raw = await this.spooled(mail);
    await this.streams.buffer(mail, raw);
    const routeIds = [...new Set(mail.recipients.flatMap((recipient) => recipient.route_ids))];
    const planned = await this.dataSource.transaction(async (manager) => {
      const routes = await manager.find(RouteEntity, {
        select: { id: true, groupByMessageId: true },
        // A temporary stream route has no URL: its mail goes to its stream only.
        where: { id: In(routeIds), accountId: mail.account_id, enabled: true, temporary: false },
      });
      const inserted = await manager.query<Array<{ id: string }>>(
        `INSERT INTO routes.inbound_messages (id, account_id, received_at, raw)
         VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING RETURNING id`,
        [mail.inbound_id, mail.account_id, new Date(mail.received_at), raw],
      );
      if (inserted.length === 0) return 0;
      const now = new Date();
      const deliveries = planDeliveries(mail.recipients, routes).map((planned) => ({
        id: randomUUID(),
        routeId: planned.routeId,
        inboundId: mail.inbound_id,
        recipients: planned.recipients,
        nextAttemptAt: now,
      }));
      if (deliveries.length > 0) await manager.insert(RouteDeliveryEntity, deliveries);
      return deliveries.length;
    });
    if (planned > 0) this.worker.wake();
  }

  /** The spooled bytes; gone or altered ones can never be handled (a dead letter, kept). */
  private async spooled(mail: RoutedMailData): Promise<Buffer> {
    try {
      return await readUpload(this.connection, mail.spool);
    } catch (error) {
      if (error instanceof UploadUnavailableError) {
        throw new UnprocessableMessageError(`inbound ${mail.inbound_id}: ${error.message}`);
      }
      throw error;
    }
  }
}
