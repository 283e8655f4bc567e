import { DomainsErrorCode, DomainsSubjects } from '@envoi/contracts-domains';
import { TtlCache } from '@envoi/shared-cache';
import { RpcError } from '@envoi/shared-nats';

import type { BusRequester } from './bus-requester';

const MAX_ENTRIES = 10_000;

/**
 * Whether an account may send from a domain: the domain is one of its sending domains and its
 * DNS records are valid. Answers are cached briefly per replica; a `domains.domain.changed`
 * broadcast drops them at once.
 */
export class SenderAuthorizer {
  private readonly cache = new TtlCache<boolean>(MAX_ENTRIES);

  constructor(
    private readonly bus: BusRequester,
    private readonly ttlMs: number,
  ) {}

  mayUse(accountId: string, domain: string): Promise<boolean> {
    return this.cache.get(
      cacheKey(accountId, domain),
      () => this.ask(accountId, domain),
      () => this.ttlMs,
    );
  }

  forget(accountId: string, domain: string): void {
    this.cache.invalidate(cacheKey(accountId, domain));
  }

  private async ask(accountId: string, domain: string): Promise<boolean> {
    try {
      const authorization = await this.bus.request(DomainsSubjects.authorizeSender, {
        account_id: accountId,
        domain,
      });
      return authorization.dns_valid;
    } catch (error) {
      if (error instanceof RpcError && error.hasCode(DomainsErrorCode.DomainNotFound)) return false;
      throw error;
    }
  }
}

function cacheKey(accountId: string, domain: string): string {
  return `${accountId}\u0000${domain.toLowerCase()}`;
}
