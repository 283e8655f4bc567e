import type { MessageRoutingPayload } from '@envoi/contracts-routes';
import {
  type ParsedInboundMessage,
  parseInboundMessage,
  payloadsFor,
} from '@envoi/shared-inbound-mail';

import { routingTimestamp } from '../routes/sample-routing';
import type { RouteCallTarget } from './route-deliveries.repository';

/** One planned call: the routed message and the recipients the call is for. */
export interface RoutingCall {
  inboundId: string;
  raw: Buffer;
  /** One address, or every address of a route grouping by message id (planned at intake). */
  recipients: string[];
}

/** What a payload takes of its route: its id and its flags. */
export type PayloadRoute = Pick<RouteCallTarget, 'id' | 'attachments' | 'headers' | 'stripReplies'>;

/**
 * The message.routing payload of one call (notes 2.8, webhooks.yaml), read within the MIME-bomb
 * limits of the inbound-mail library: rejects with its InboundMessageRejected for a message it
 * refuses. The call is already planned per recipient or per email (several recipients: grouped).
 */
export async function routingPayload(
  call: RoutingCall,
  route: PayloadRoute,
  now: Date,
): Promise<MessageRoutingPayload> {
  return routingPayloadOf(await parseInboundMessage(call.raw), call, route, now);
}

/** The payload of one call from the message parsed once for all of its calls. */
export function routingPayloadOf(
  message: ParsedInboundMessage,
  call: RoutingCall,
  route: PayloadRoute,
  now: Date,
): MessageRoutingPayload {
  const [payload] = payloadsFor(
    { message, id: call.inboundId, size: call.raw.length, recipients: call.recipients },
    {
      routeId: route.id,
      timestamp: routingTimestamp(now),
      options: {
        attachments: route.attachments,
        headers: route.headers,
        strip_replies: route.stripReplies,
        group_by_message_id: call.recipients.length > 1,
      },
    },
  );
  if (!payload) throw new Error(`call for inbound ${call.inboundId} has no recipient`);
  return payload;
}
