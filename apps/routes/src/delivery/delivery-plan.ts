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
