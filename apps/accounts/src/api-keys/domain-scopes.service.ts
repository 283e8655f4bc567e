import { CodedError, CommonErrorCode } from '@envoi/contracts-core';
import { type DomainDeletedData, DomainsSubjects } from '@envoi/contracts-domains';
import { RpcClient, RpcError } from '@envoi/shared-nats';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { AccountsConfig } from '../accounts.config';
import { ApiKeyEvents } from './api-key-events';
import {
  type CanonicalScope,
  type GrantedScope,
  grantScopes,
  grantWithoutDomains,
  scopeDomains,
} from './api-key-rules';
import { ApiKeysException } from './api-keys.exception';
import { DomainScopesRepository } from './domain-scopes.repository';

/**
 * Domain scopes against the domains service: a grant names only owned domains (resolved over the
 * bus, stored with their ids), and a domain's deletion removes the scopes that name it.
 */
@Injectable()
export class DomainScopesService {
  private readonly logger = new Logger(DomainScopesService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly repository: DomainScopesRepository,
    private readonly rpc: RpcClient,
    private readonly config: AccountsConfig,
    private readonly events: ApiKeyEvents,
  ) {}

  /**
   * Resolves the domains the scopes name (one request, none without domain scopes). Fails with
   * `accounts.domain_not_owned` for a domain the account does not own, and with
   * `common.unavailable` when the domains service does not answer. Call outside transactions.
   */
  async grant(accountId: string, scopes: readonly CanonicalScope[]): Promise<GrantedScope[]> {
    const domains = scopeDomains(scopes);
    if (domains.length === 0) return grantWithoutDomains(scopes);
    try {
      const resolved = await this.rpc.request(
        DomainsSubjects.resolveDomains,
        { account_id: accountId, domains },
        { timeoutMs: this.config.DOMAINS_RPC_TIMEOUT_MS },
      );
      return grantScopes(scopes, resolved);
    } catch (error) {
      if (error instanceof RpcError && error.hasCode(CommonErrorCode.Unavailable)) {
        this.logger.warn(`domains service unavailable: ${error.message}`);
        throw new CodedError(CommonErrorCode.Unavailable, 'service temporarily unavailable');
      }
      throw error;
    }
  }

  /**
   * In the transaction that stores granted scopes, before anything else: holds their domains
   * against a concurrent deletion until the commit, and fails for a domain whose deletion has
   * already been handled (it was resolved just before it went away).
   */
  async holdDomains(manager: EntityManager, scopes: readonly GrantedScope[]): Promise<void> {
    const ids = [...new Set(scopes.flatMap((scope) => (scope.domainId ? [scope.domainId] : [])))];
    if (ids.length === 0) return;
    await this.repository.lockDomainsShared(ids, manager);
    const deleted = await this.repository.deletedAmong(ids, manager);
    for (const scope of scopes) {
      if (scope.domain !== null && scope.domainId !== null && deleted.has(scope.domainId)) {
        throw ApiKeysException.domainNotOwned(scope.domain);
      }
    }
  }

  /**
   * Removes every scope naming a deleted domain and announces the keys that changed. Idempotent:
   * a redelivered event finds nothing left to remove and announces nothing. Returns the keys.
   */
  async removeDeletedDomain(deletion: DomainDeletedData): Promise<string[]> {
    const keyIds = await this.dataSource.transaction(async (manager) => {
      await this.repository.lockDomain(deletion.domain_id, manager);
      await this.repository.recordDeletion(deletion, manager);
      return this.repository.removeScopesNaming(deletion, manager);
    });
    for (const keyId of keyIds) this.events.changed(keyId, deletion.account_id);
    return keyIds;
  }
}
