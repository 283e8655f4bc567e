import { DomainsSubjects } from '@envoi/contracts-domains';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { SuppressionsException } from './suppressions.exception';

/**
 * The domains of an account, as the domains service knows them. Not cached: a domain created a
 * moment ago must be found, and the domains service announces no creations.
 */
@Injectable()
export class AccountDomains {
  constructor(private readonly rpc: RpcClient) {}

  /** Fails with `suppressions.domain_not_found` unless the account owns the (normalised) domain. */
  async requireOwned(accountId: string, domain: string): Promise<void> {
    const { found } = await this.rpc.request(DomainsSubjects.resolveDomains, {
      account_id: accountId,
      domains: [domain],
    });
    if (found.length === 0) throw SuppressionsException.domainNotFound();
  }
}
