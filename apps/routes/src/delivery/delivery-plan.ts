import { createHash } from 'node:crypto';

import type { RoutedMailData } from '@envoi/contracts-routes';

/** What planning needs of a route. */
export interface PlannedRoute {
  id: string;
  groupByMessageId: boolean;
}

/** One call to make: a route and the recipients it is for. */
export interface PlannedDelivery<Route extends PlannedRoute = PlannedRoute> {
  route: Route;
  recipients: string[];
}

/**
 * The calls a routed message makes (notes 2.8): per route, one per recipient it takes, or one
 * for all of them when the route groups by message id. Routes not among `routes` (deleted or
 * disabled since RCPT) get none.
 */
export function planDeliveries<Route extends PlannedRoute>(
  recipients: RoutedMailData['recipients'],
  routes: readonly Route[],
): Array<PlannedDelivery<Route>> {
  const planned: Array<PlannedDelivery<Route>> = [];
  for (const route of routes) {
    const taken = recipients
      .filter((recipient) => recipient.route_ids.includes(route.id))
      .map((recipient) => recipient.address);
    const unique = [...new Set(taken)];
    if (unique.length === 0) continue;
    if (route.groupByMessageId) planned.push({ route, recipients: unique });
    else for (const address of unique) planned.push({ route, recipients: [address] });
  }
  return planned;
}

/** The SHA-256 (hex) of a planned call: the same each time its message is taken. */
export function plannedCallDigest(
  inboundId: string,
  routeId: string,
  recipients: readonly string[],
): string {
  return createHash('sha256')
    .update([inboundId, routeId, ...recipients].join('\n'))
    .digest('hex');
}

/**
 * A call's id (its `webhook-id`), the same each time its message's event is taken: a call made
 * again after a crash carries the same id, so the route URL can tell it received it before.
 */
export function routeCallId(
  inboundId: string,
  routeId: string,
  recipients: readonly string[],
): string {
  const hex = plannedCallDigest(inboundId, routeId, recipients);
  // An RFC 9562 version 8 (custom) UUID.
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
