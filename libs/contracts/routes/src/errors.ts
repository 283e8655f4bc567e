/** Errors the routes service raises; the gateway maps each to an HTTP status. */
export enum RoutesErrorCode {
  NotFound = 'routes.route_not_found',
  InvalidUrl = 'routes.invalid_url',
  /** A recipient pattern that is not one of the forms of notes 2.8. */
  InvalidRecipient = 'routes.invalid_recipient',
  /** The pattern's domain is not a domain of the account. */
  DomainNotFound = 'routes.domain_not_found',
  /** A domain-scoped key without the scope of the route's (old or new) domain. */
  ScopeNotGranted = 'routes.scope_not_granted',
  /** Another listener is attached to the route's stream. */
  StreamListenerAttached = 'routes.stream_listener_attached',
  /** The listener is no longer the one attached to the route's stream. */
  StreamNotAttached = 'routes.stream_not_attached',
  /** POST …/routes/stream with both or neither of route_id and recipient. */
  StreamTargetInvalid = 'routes.stream_target_invalid',
}
