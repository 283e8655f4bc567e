import type { MessageRoutingPayload } from '@envoi/contracts-routes';
import { parseInboundMessage, payloadsFor } from '@envoi/shared-inbound-mail';

import { routingTimestamp } from '../routes/sample-routing';
import type { RouteCallTarget } from './route-deliveries.repository';

/** One planned call: the routed message and the recipients the call is for. */
export interface RoutingCall {
  inboundId: string;
  raw: Buffer;
  /** One address, or every address of a route grouping by message id (planned at intake). */
  recipients: string[];
}

/**
 * The message.routing payload of one call (notes 2.8, webhooks.yaml), read within the MIME-bomb
 * limits of the inbound-mail library: rejects with its InboundMessageRejected for a message it
 * refuses. The call is already planned per recipient or per email (several recipients: grouped).
 */
export async function routingPayload(
  call: RoutingCall,
  route: RouteCallTarget,
  now: Date,
): Promise<MessageRoutingPayload> {
  const message = await parseInboundMessage(call.raw);
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
