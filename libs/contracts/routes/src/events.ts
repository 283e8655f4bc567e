/**
 * A change to what routes take at RCPT (a route created, updated, deleted, disabled by failures,
 * or temporary routes purged): `domain` names the domain whose route set changed; null when any
 * domain's may have (a route for every domain of its account, a purge).
 */
export interface RouteMatchChangedEvent {
  domain: string | null;
}
