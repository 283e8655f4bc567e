import type { WebhookEventFlag } from '@envoi/contracts-webhooks';

/** An enabled webhook with a URL, as the fan-out matches events against it. */
export interface SubscribedEndpoint {
  webhookId: string;
  url: string;
  secretCiphertext: string;
  /** Global: every event of the account; else only those of its domains. */
  global: boolean;
  domains: ReadonlySet<string>;
  flags: ReadonlySet<WebhookEventFlag>;
  /** Its last call failed when the set was read. */
  failing: boolean;
}

/** Which of an account's enabled webhooks receive what. */
export interface SubscriptionSet {
  endpoints: readonly SubscribedEndpoint[];
  /** Some webhook of the account buffers events for a stream listener (the fan-out asks the database which). */
  streamed: boolean;
}

export const NO_SUBSCRIPTIONS: SubscriptionSet = { endpoints: [], streamed: false };

/** What an event is about: its flag and the domain its scoped webhooks are linked to. */
export interface SubscriptionMatch {
  flag: WebhookEventFlag;
  domain: string | null;
}

/** The endpoints that receive an event (only enabled webhooks are in a set). */
export function endpointsFor(set: SubscriptionSet, event: SubscriptionMatch): SubscribedEndpoint[] {
  return set.endpoints.filter(
    (endpoint) =>
      endpoint.flags.has(event.flag) &&
      (endpoint.global || (event.domain !== null && endpoint.domains.has(event.domain))),
  );
}
