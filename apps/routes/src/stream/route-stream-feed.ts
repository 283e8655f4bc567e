import type { RoutedMailData } from '@envoi/contracts-routes';
import { InboundMessageRejected } from '@envoi/shared-inbound-mail';
import { ListenerStreams, type NewStreamEvent } from '@envoi/shared-listener-streams';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';

import { planDeliveries } from '../delivery/delivery-plan';
import { routingPayload } from '../delivery/routing-payload';
import { RouteEntity } from '../routes/route.entity';
import { streamEventId, withoutAttachmentBytes } from './streamed-payload';

/**
 * Routed mail for the routes that have a stream (temporary ones, or existing ones opened with
 * route_id): each planned call's `message.routing` payload, as the route would be POSTed it but
 * without attachment bytes, buffered for the route's listener. Called by the intake before it
 * plans the calls, so a message is buffered at least once (once per call id: a redelivered
 * message buffers nothing new while its events wait).
 */
@Injectable()
export class RouteStreamFeed {
  private readonly logger = new Logger(RouteStreamFeed.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly streams: ListenerStreams,
  ) {}

  async buffer(mail: RoutedMailData, raw: Buffer): Promise<void> {
    const routeIds = [...new Set(mail.recipients.flatMap((recipient) => recipient.route_ids))];
    const routes = await this.dataSource.manager.find(RouteEntity, {
      select: {
        id: true,
        groupByMessageId: true,
        attachments: true,
        headers: true,
        stripReplies: true,
      },
      where: { id: In(routeIds), accountId: mail.account_id, enabled: true, streamed: true },
    });
    if (routes.length === 0) return;
    const now = new Date();
    const events: NewStreamEvent[] = [];
    for (const call of planDeliveries(mail.recipients, routes)) {
      const route = routes.find((candidate) => candidate.id === call.routeId);
      if (!route) continue;
      const payload = await this.payload(mail, raw, call.recipients, route, now);
      if (!payload) return;
      events.push({
        targetId: route.id,
        eventId: streamEventId(mail.inbound_id, route.id, call.recipients),
        eventType: payload.type,
        body: JSON.stringify(withoutAttachmentBytes(payload)),
      });
    }
    await this.streams.append(events);
  }

  /** Undefined for a message the inbound-mail library refuses (its calls give up with the reason). */
  private async payload(
    mail: RoutedMailData,
    raw: Buffer,
    recipients: string[],
    route: RouteEntity,
    now: Date,
  ) {
    try {
      return await routingPayload({ inboundId: mail.inbound_id, raw, recipients }, route, now);
    } catch (error) {
      if (!(error instanceof InboundMessageRejected)) throw error;
      this.logger.warn(`inbound ${mail.inbound_id} not streamed: ${error.message}`);
      return undefined;
    }
  }
}
