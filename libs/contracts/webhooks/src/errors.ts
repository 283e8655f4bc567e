/**
 * The error codes the webhooks service raises (`new CodedError(code, message)`). Each has its
 * HTTP status in the gateway's table (apps/gateway/src/errors/error-status.ts): a code without one
 * fails to compile.
 */
export enum WebhooksErrorCode {
  NotFound = 'webhooks.not_found',
  InvalidUrl = 'webhooks.invalid_url',
  InvalidDomains = 'webhooks.invalid_domains',
  DomainNotFound = 'webhooks.domain_not_found',
  /** A domain-scoped key asked for a webhook beyond its domains (a global one, another domain). */
  ScopeNotGranted = 'webhooks.scope_not_granted',
  /** Another listener is attached to the webhook's stream. */
  StreamListenerAttached = 'webhooks.stream_listener_attached',
  /** The listener is no longer the one attached to the webhook's stream. */
  StreamNotAttached = 'webhooks.stream_not_attached',
}
