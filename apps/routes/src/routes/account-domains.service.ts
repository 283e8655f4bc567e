import { DomainsSubjects } from '@envoi/contracts-domains';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { RoutesException } from './routes.exception';

/** The domains of an account, as the domains service knows them (not cached: a new one counts). */
@Injectable()
export class AccountDomains {
  constructor(private readonly rpc: RpcClient) {}

  /** The id of the account's domain of that name; `routes.domain_not_found` otherwise. */
  async idOf(accountId: string, domain: string): Promise<string> {
    const { found } = await this.rpc.request(DomainsSubjects.resolveDomains, {
      account_id: accountId,
      domains: [domain],
    });
    const [owned] = found;
    if (owned === undefined) throw RoutesException.domainNotFound(domain);
    return owned.domain_id;
  }
}
