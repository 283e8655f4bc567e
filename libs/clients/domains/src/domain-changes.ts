import { DomainsSubjects } from '@envoi/contracts-domains';
import { subscribeBroadcast } from '@envoi/shared-nats';
import type { NatsConnection, Subscription } from 'nats';

/**
 * Calls `changed(accountId, domain)` whenever a domain of any account changes or is deleted (the
 * domains service broadcasts both to every replica), so that caches of domain answers drop it at
 * once. Returns the subscriptions, to unsubscribe on shutdown.
 */
export function onDomainChanges(
  connection: NatsConnection,
  changed: (accountId: string, domain: string) => void,
  onError: (error: unknown) => void,
): Subscription[] {
  const handle = (event: { account_id: string; domain: string }) =>
    changed(event.account_id, event.domain);
  return [
    subscribeBroadcast(connection, DomainsSubjects.domainChanged, handle, onError),
    subscribeBroadcast(connection, DomainsSubjects.domainDeleted, handle, onError),
  ];
}
