import type { RoutedMailData } from '@envoi/contracts-routes';

/** What planning needs of a route. */
export interface PlannedRoute {
  id: string;
  groupByMessageId: boolean;
}

/** One call to make: a route and the recipients it is for. */
export interface PlannedDelivery {
  routeId: string;
  recipients: string[];
}

/**
 * The calls a routed message makes (notes 2.8): per route, one per recipient it takes, or one
 * for all of them when the route groups by message id. Routes not among `routes` (deleted or
 * disabled since RCPT) get none.
 */
export function planDeliveries(
  recipients: RoutedMailData['recipients'],
  routes: readonly PlannedRoute[],
): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  for (const route of routes) {
    const taken = recipients
      .filter((recipient) => recipient.route_ids.includes(route.id))
      .map((recipient) => recipient.address);
    const unique = [...new Set(taken)];
    if (unique.length === 0) continue;
    if (route.groupByMessageId) planned.push({ routeId: route.id, recipients: unique });
    else for (const address of unique) planned.push({ routeId: route.id, recipients: [address] });
  }
  return planned;
}
