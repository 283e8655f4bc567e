import type { MessageResponse, Page, StreamEvent } from '@envoi/contracts-core';
import { eventSubject, requestSubject, streamSubject } from '@envoi/contracts-core';

import type {
  DkimSigningKey,
  DomainCounts,
  DomainDeletedData,
  DomainDnsErrorData,
  DomainOwners,
  DomainRecord,
  ResolvedDomains,
  ReturnPathHostMatch,
  SenderAuthorization,
} from './records';
import type {
  AuthorizeSenderRequest,
  CountDomainsRequest,
  CreateDomainRequest,
  DomainChangedEvent,
  DomainDeletedEvent,
  DomainRef,
  FindDomainOwnersRequest,
  GetDkimSigningKeyRequest,
  ListDomainsRequest,
  MatchReturnPathHostRequest,
  ResolveDomainsRequest,
  UpdateDomainRequest,
} from './requests';

export const DomainsSubjects = {
  listDomains: requestSubject<ListDomainsRequest, Page<DomainRecord>>('domains.domain.list.v1'),
  createDomain: requestSubject<CreateDomainRequest, DomainRecord>('domains.domain.create.v1'),
  getDomain: requestSubject<DomainRef, DomainRecord>('domains.domain.get.v1'),
  updateDomain: requestSubject<UpdateDomainRequest, DomainRecord>('domains.domain.update.v1'),
  deleteDomain: requestSubject<DomainRef, MessageResponse>('domains.domain.delete.v1'),
  /** Checks the DNS now, or answers the last result when it is under 60 s old. */
  checkDns: requestSubject<DomainRef, DomainRecord>('domains.domain.check-dns.v1'),

  /** Internal: sender domain verification for the senders (messages, delivery, smtp); no key. */
  authorizeSender: requestSubject<AuthorizeSenderRequest, SenderAuthorization>(
    'domains.sender.authorize.v1',
  ),
  /** Internal: the DKIM private key of a sender domain, for the delivery service only. */
  getDkimSigningKey: requestSubject<GetDkimSigningKeyRequest, DkimSigningKey>(
    'domains.dkim.signing-key.get.v1',
  ),
  /** Internal: owned domains among names (API-key domain scopes). */
  resolveDomains: requestSubject<ResolveDomainsRequest, ResolvedDomains>(
    'domains.domain.resolve.v1',
  ),
  /** Internal: the accounts having a domain name (inbound mail routing); no key. */
  findOwners: requestSubject<FindDomainOwnersRequest, DomainOwners>('domains.domain.owners.v1'),

  /** Internal: the MX's question for `bounce+<uuid>@<host>` on a host other than the platform's. */
  matchReturnPathHost: requestSubject<MatchReturnPathHostRequest, ReturnPathHostMatch>(
    'domains.return-path.match.v1',
  ),

  /** Internal: the number of domains of each account (sub-account records), one call per page. */
  countDomains: requestSubject<CountDomainsRequest, DomainCounts>('domains.domain.count.v1'),

  /** Broadcast (no queue group): a domain changed or went away; drop cached authorizations. */
  domainChanged: eventSubject<DomainChangedEvent>('domains.domain.changed.v1'),
  /** Broadcast (no queue group) when a domain is deleted; the durable form is on the stream. */
  domainDeleted: eventSubject<DomainDeletedEvent>('domains.domain.deleted.v1'),
} as const;

export type DomainDnsErrorEvent = StreamEvent<'domain.dns_error', DomainDnsErrorData>;
export type DomainDeletedStreamEvent = StreamEvent<'domain.deleted', DomainDeletedData>;

/** Durable events on the EVENTS stream (JetStream), published through the outbox. */
export const DomainsStreamSubjects = {
  /** A domain's DNS went from valid to invalid: once per transition. */
  dnsError: streamSubject<DomainDnsErrorEvent>('events.domain.dns_error.v1'),
  /** A domain was deleted: API-key scopes naming it must go. */
  deleted: streamSubject<DomainDeletedStreamEvent>('events.domain.deleted.v1'),
} as const;
