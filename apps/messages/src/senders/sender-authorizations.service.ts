import { DomainsClient } from '@envoi/clients-domains';
import { CodedError, normalizeDomainName } from '@envoi/contracts-core';
import { DomainsErrorCode, type SenderAuthorization } from '@envoi/contracts-domains';
import { Injectable } from '@nestjs/common';

import { MessagesException } from '../messages/messages.exception';

/** What a send needs to know about its sender domain (never the DKIM key). */
export interface AuthorizedSender {
  domainId: string;
  /** Normalised (lowercase, no trailing dot). */
  domain: string;
}

/**
 * Spec 4.2 rule 2: the From domain must be a domain of the account with valid DNS records. The
 * domains client caches the answer and drops it when the domain changes or goes away.
 */
@Injectable()
export class SenderAuthorizations {
  constructor(private readonly domains: DomainsClient) {}

  /** The sender domain, or SenderDomainNotOwned / SenderDomainNotVerified. */
  async authorize(accountId: string, rawDomain: string): Promise<AuthorizedSender> {
    let answer: SenderAuthorization;
    try {
      answer = await this.domains.senderAuthorization(accountId, rawDomain);
    } catch (error) {
      if (error instanceof CodedError && error.hasCode(DomainsErrorCode.DomainNotFound)) {
        throw MessagesException.senderNotOwned(normalizeDomainName(rawDomain));
      }
      throw error;
    }
    if (!answer.dns_valid) throw MessagesException.senderNotVerified(answer.domain);
    return { domainId: answer.domain_id, domain: answer.domain };
  }
}
