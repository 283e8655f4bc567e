import { CodedError, CommonErrorCode } from '@envoi/contracts-core';
import { DomainsSubjects } from '@envoi/contracts-domains';
import { RpcClient, RpcError } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';

import { AccountsConfig } from '../accounts.config';
import type { SubAccountCounts } from './sub-account.mapper';
import { SubAccountsRepository } from './sub-accounts.repository';

/**
 * The domain and member counts of sub-accounts: domains from the domains service (one request
 * per page), members from the member rows. Fails with `common.unavailable` when the domains
 * service does not answer.
 */
@Injectable()
export class SubAccountCountsService {
  private readonly logger = new Logger(SubAccountCountsService.name);

  constructor(
    private readonly repository: SubAccountsRepository,
    private readonly rpc: RpcClient,
    private readonly config: AccountsConfig,
  ) {}

  async of(accountIds: readonly string[]): Promise<Map<string, SubAccountCounts>> {
    const counts = new Map<string, SubAccountCounts>();
    if (accountIds.length === 0) return counts;
    const [domains, members] = await Promise.all([
      this.domainCounts(accountIds),
      this.repository.memberCounts(accountIds),
    ]);
    for (const id of accountIds) {
      counts.set(id, { domainCount: domains[id] ?? 0, memberCount: members.get(id) ?? 0 });
    }
    return counts;
  }

  private async domainCounts(accountIds: readonly string[]): Promise<Record<string, number>> {
    try {
      const answer = await this.rpc.request(
        DomainsSubjects.countDomains,
        { account_ids: [...accountIds] },
        { timeoutMs: this.config.DOMAINS_RPC_TIMEOUT_MS },
      );
      return answer.counts;
    } catch (error) {
      if (!(error instanceof RpcError && error.hasCode(CommonErrorCode.Unavailable))) throw error;
      this.logger.warn(`domains service unavailable for domain counts: ${error.message}`);
      throw new CodedError(CommonErrorCode.Unavailable, 'service temporarily unavailable');
    }
  }
}
