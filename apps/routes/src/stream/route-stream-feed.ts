import { ListenerStreams, type NewStreamEvent } from '@envoi/shared-listener-streams';
import { Injectable } from '@nestjs/common';

import { planDeliveries, type PlannedRoute } from '../delivery/delivery-plan';
import { type PayloadRoute, routingPayloadOf } from '../delivery/routing-payload';
import type { TakenMail } from '../delivery/taken-mail';
import { streamEventId, withoutAttachmentBytes } from './streamed-payload';

/** What buffering for a route's stream needs of it. */
export type StreamableRoute = PayloadRoute &
  PlannedRoute & { accountId: string; streamed: boolean };

/**
 * Routed mail for the routes that have a stream (temporary ones, or existing ones opened with
 * route_id): each call's `message.routing` payload, as the route would be POSTed it but without
 * attachment bytes, buffered for the route's listener. The intake calls this before it plans the
 * calls, so a message is buffered at least once (once per call id: a redelivered message taken
 * before, one of `known`, buffers nothing new). A message the inbound-mail library refuses is not
 * streamed.
 */
@Injectable()
export class RouteStreamFeed {
  constructor(private readonly streams: ListenerStreams) {}

  async buffer(
    taken: readonly TakenMail[],
    routes: readonly StreamableRoute[],
    now: Date,
    known: ReadonlySet<string>,
  ): Promise<void> {
    const streamed = routes.filter((route) => route.streamed);
    if (streamed.length === 0) return;
    const events: NewStreamEvent[] = [];
    for (const { mail, raw, parsed } of taken) {
      if (known.has(mail.inbound_id) || 'refused' in parsed) continue;
      const own = streamed.filter((route) => route.accountId === mail.account_id);
      for (const { route, recipients } of planDeliveries(mail.recipients, own)) {
        const call = { inboundId: mail.inbound_id, raw, recipients };
        const payload = routingPayloadOf(parsed.message, call, route, now);
        events.push({
          targetId: route.id,
          eventId: streamEventId(mail.inbound_id, route.id, recipients),
          eventType: payload.type,
          body: JSON.stringify(withoutAttachmentBytes(payload)),
        });
      }
    }
    await this.streams.append(events);
  }
}
