import { normalizeDomainName, validatePayload } from '@envoi/contracts-core';
import {
  type DomainDeletedData,
  DomainDeletedEvent,
  DomainsStreamSubjects,
} from '@envoi/contracts-domains';
import { StreamConsumer, UnprocessableMessageError } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { SmtpCredentialDomains } from '../smtp-credentials/smtp-credential-domains.service';
import { DomainScopesService } from './domain-scopes.service';

/** The durable consumer every replica of this service shares. */
export const DOMAIN_DELETED_DURABLE = 'accounts-domain-deleted';

/**
 * The data of a `domain.deleted` stream event, validated against its contract; an event that can
 * never be handled (wrong type, bad fields) is unprocessable, not retried.
 */
export function toDomainDeletion(event: unknown): DomainDeletedData {
  const envelope = (typeof event === 'object' && event !== null ? event : {}) as {
    id?: unknown;
    type?: unknown;
    data?: unknown;
  };
  const what = `event ${String(envelope.id)}`;
  if (envelope.type !== 'domain.deleted') {
    throw new UnprocessableMessageError(`${what} is not domain.deleted: ${String(envelope.type)}`);
  }
  const data = validatePayload(DomainDeletedEvent, envelope.data);
  if (!data.ok) throw new UnprocessableMessageError(`${what}: ${data.message}`);
  if (Number.isNaN(Date.parse(data.value.deleted_at))) {
    throw new UnprocessableMessageError(`${what}: deleted_at is not a time`);
  }
  return {
    domain_id: data.value.domain_id,
    account_id: data.value.account_id,
    domain: normalizeDomainName(data.value.domain),
    deleted_at: data.value.deleted_at,
  };
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
