import { normalizeDomainName } from '@envoi/contracts-core';
import {
  type DomainDeletedData,
  DomainDeletedEvent,
  DomainsStreamSubjects,
} from '@envoi/contracts-domains';
import { eventDataDecoder, StreamConsumer, UnprocessableMessageError } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { SmtpCredentialDomains } from '../smtp-credentials/smtp-credential-domains.service';
import { DomainScopesService } from './domain-scopes.service';

/** The durable consumer every replica of this service shares. */
export const DOMAIN_DELETED_DURABLE = 'accounts-domain-deleted';

const decodeDomainDeleted = eventDataDecoder('domain.deleted', DomainDeletedEvent);

/**
 * The data of a `domain.deleted` stream event, validated against its contract; an event that can
 * never be handled (wrong type, bad fields) is unprocessable, not retried.
 */
export function toDomainDeletion(event: unknown): DomainDeletedData {
  const { domain_id, account_id, domain, deleted_at } = decodeDomainDeleted(event);
  if (Number.isNaN(Date.parse(deleted_at))) {
    throw new UnprocessableMessageError(`domain.deleted of ${domain_id}: deleted_at is not a time`);
  }
  return { domain_id, account_id, domain: normalizeDomainName(domain), deleted_at };
}

/**
 * Handles `events.domain.deleted` from the EVENTS stream (one handler per subject in a service):
 * the key scopes naming the domain go, and so do the SMTP credentials' links to it.
 */
@Injectable()
export class DomainEventsController {
  constructor(
    private readonly domainScopes: DomainScopesService,
    private readonly smtpCredentialDomains: SmtpCredentialDomains,
  ) {}

  @StreamConsumer({
    durables: { [DOMAIN_DELETED_DURABLE]: DomainsStreamSubjects.deleted },
    decode: toDomainDeletion,
  })
  async removeDeletedDomain(deletion: DomainDeletedData): Promise<void> {
    await this.domainScopes.removeDeletedDomain(deletion);
    await this.smtpCredentialDomains.unlinkDeletedDomain(deletion);
  }
}
