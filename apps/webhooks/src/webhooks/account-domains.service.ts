import { DomainsSubjects } from '@envoi/contracts-domains';
import { RpcClient } from '@envoi/shared-nats';
import { Injectable } from '@nestjs/common';

import { WebhooksException } from './webhooks.exception';

/** The domains of an account, as the domains service knows them (not cached: a new one counts). */
@Injectable()
export class AccountDomains {
  constructor(private readonly rpc: RpcClient) {}

  /** Fails with `webhooks.domain_not_found` (naming the first) unless the account owns every one. */
  async requireOwned(accountId: string, domains: readonly string[]): Promise<void> {
    if (domains.length === 0) return;
    const { missing } = await this.rpc.request(DomainsSubjects.resolveDomains, {
      account_id: accountId,
      domains: [...domains],
    });
    const [first] = missing;
    if (first !== undefined) throw WebhooksException.domainNotFound(first);
  }
}
