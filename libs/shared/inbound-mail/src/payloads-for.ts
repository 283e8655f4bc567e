import type { MessageRoutingPayload, RouteOptions } from '@envoi/contracts-routes';

import type { ParsedInboundMessage } from './parsed-inbound-message';
import { routingData } from './routing-data';

export interface RoutedMessage {
  message: ParsedInboundMessage;
  /** The inbound message id (`data.id`). */
  id: string;
  /** Raw size in bytes. */
  size: number;
  /** MAIL FROM without `<>`; `""` for a null reverse-path. */
  sender?: string;
  /** The envelope recipients (To, Cc or Bcc alike) that matched the route, in RCPT order. */
  recipients: string[];
}

export interface RoutingTarget {
  routeId: string;
  options: RouteOptions;
  /** RFC 3339 with nanoseconds. */
  timestamp: string;
}

/**
 * The bodies to POST for one route (notes 2.8 grouping): one per matched recipient, each with
 * that recipient as `to`; with `group_by_message_id`, one for the email, whose `to` is the first
 * matched recipient (webhooks.yaml: `to` is one address).
 */
export function payloadsFor(routed: RoutedMessage, target: RoutingTarget): MessageRoutingPayload[] {
  const envelopes = target.options.group_by_message_id
    ? routed.recipients.slice(0, 1)
    : [...new Set(routed.recipients)];
  return envelopes.map((recipient) => ({
    type: 'message.routing',
    route_id: target.routeId,
    timestamp: target.timestamp,
    data: routingData(
      routed.message,
      { id: routed.id, size: routed.size, sender: routed.sender, recipient },
      target.options,
    ),
  }));
}
