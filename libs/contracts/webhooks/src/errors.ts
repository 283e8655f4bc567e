/**
 * The error codes the webhooks service raises (`new CodedError(code, message)`). Each has its
 * HTTP status in the gateway's table (apps/gateway/src/errors/error-status.ts): a code without one
 * fails to compile.
 */
export enum WebhooksErrorCode {
  /** A placeholder for the service's first resource: rename or replace it. */
  NotFound = 'webhooks.not_found',
}
