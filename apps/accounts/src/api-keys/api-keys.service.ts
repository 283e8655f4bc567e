import {
  AccountsStreamSubjects,
  ALL_ACCESS_SCOPES,
  type ApiKeyRecord,
  type ApiKeyUse,
  type CreateApiKeyBody,
  type CreatedApiKeyRecord,
  type UpdateApiKeyRequest,
  type VerifiedApiKey,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { isIpAllowed } from '@envoi/shared-net';
import { enqueueEvent } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { assertAccountExists } from '../accounts/account-lookup';
import { AccountsRepository } from '../accounts/accounts.repository';
import type { ApiKeyEntity } from './api-key.entity';
import { toApiKeyRecord, toCreatedApiKeyRecord } from './api-key.mapper';
import { ApiKeyEvents } from './api-key-events';
import {
  canonicalizeIpAllowList,
  canonicalizeScopes,
  type GrantedScope,
  grantWithoutDomains,
  sameAllowList,
  sameScopeSet,
  scopeDomains,
} from './api-key-rules';
import type { ApiKeyScopeEntity } from './api-key-scope.entity';
import { generateApiKey } from './api-key-secret';
import { ApiKeysException } from './api-keys.exception';
import { ApiKeysRepository } from './api-keys.repository';
import { DomainScopesService } from './domain-scopes.service';
import { type IpAllowListChange, ipAllowListChangedEvent } from './ip-allow-list-event';
import { isParentOnlyScope } from './sub-account-keys.rules';

export const FULL_ACCESS_LABEL = 'Full access';

@Injectable()
export class ApiKeysService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly keys: ApiKeysRepository,
    private readonly domainScopes: DomainScopesService,
    private readonly events: ApiKeyEvents,
  ) {}

  async list(accountId: string, page: PageRequest): Promise<Page<ApiKeyRecord>> {
    await assertAccountExists(this.accounts, accountId);
    const result = await this.keys.page(accountId, page);
    const scopes = await this.keys.scopesByKey(result.data.map((key) => key.id));
    return {
      ...result,
      data: result.data.map((key) => toApiKeyRecord(key, scopes.get(key.id) ?? [])),
    };
  }

  /**
   * Every domain a scope names must be one of the account's domains (asked of the domains
   * service before the transaction; nothing is written when it fails or does not answer).
   */
  async create(accountId: string, body: CreateApiKeyBody): Promise<CreatedApiKeyRecord> {
    const canonical = canonicalizeScopes(body.scopes);
    const ipAllowList = canonicalizeIpAllowList(body.ip_allow_list ?? []);
    if (scopeDomains(canonical).length > 0) {
      // An unknown account is not_found, not "domain not owned".
      await assertAccountExists(this.accounts, accountId);
    }
    const scopes = await this.domainScopes.grant(accountId, canonical);
    return this.dataSource.transaction(async (manager) => {
      await this.domainScopes.holdDomains(manager, scopes);
      const created = await this.insertKey(manager, accountId, body.label, scopes, ipAllowList);
      if (ipAllowList.length > 0) {
        await this.announceAllowList(manager, {
          accountId,
          keyId: created.id,
          label: created.label,
          previous: [],
          next: ipAllowList,
          at: new Date(created.created_at),
        });
      }
      return created;
    });
  }

  /**
   * Issues a full-access key inside the caller's transaction (an account's first key). A
   * sub-account's has every scope but those only a parent's key may hold.
   */
  createFullAccessInTransaction(
    manager: EntityManager,
    accountId: string,
    isSubAccount = false,
  ): Promise<CreatedApiKeyRecord> {
    const granted = isSubAccount
      ? ALL_ACCESS_SCOPES.filter((scope) => !isParentOnlyScope(scope))
      : ALL_ACCESS_SCOPES;
    const scopes = grantWithoutDomains(canonicalizeScopes(granted));
    return this.insertKey(manager, accountId, FULL_ACCESS_LABEL, scopes, []);
  }

  private async insertKey(
    manager: EntityManager,
    accountId: string,
    label: string,
    scopes: readonly GrantedScope[],
    ipAllowList: string[],
  ): Promise<CreatedApiKeyRecord> {
    await assertAccountExists(this.accounts, accountId, manager);
    const generated = generateApiKey();
    const key = await this.keys.insertKey(
      {
        accountId,
        label,
        publicKey: generated.publicKey,
        secretHash: generated.secretHash,
        ipAllowList,
        lastUsedAt: null,
      },
      manager,
    );
    const scopeEntities = await this.keys.insertScopes(key.id, scopes, manager);
    return toCreatedApiKeyRecord(toApiKeyRecord(key, scopeEntities), generated.secretKey);
  }

  async get(accountId: string, keyId: string): Promise<ApiKeyRecord> {
    const key = await this.findKey(accountId, keyId);
    const scopes = await this.keys.scopesByKey([key.id]);
    return toApiKeyRecord(key, scopes.get(key.id) ?? []);
  }

  /**
   * Null or omitted fields stay unchanged; at least one provided value must differ. New scopes
   * name only the account's domains, as on creation. A key that narrows its own allow list must
   * keep the caller's address in it (spec 5.7); a parent managing a sub-account's key sends no
   * caller and has no such guard.
   */
  async update(request: UpdateApiKeyRequest): Promise<ApiKeyRecord> {
    const { account_id: accountId, key_id: keyId, changes, caller } = request;
    const scopes = await this.grantRequestedScopes(accountId, keyId, changes.scopes ?? null);
    const record = await this.dataSource.transaction(async (manager) => {
      if (scopes !== null) await this.domainScopes.holdDomains(manager, scopes);
      const key = await this.lockKey(accountId, keyId, manager);
      const currentScopes = (await this.keys.scopesByKey([key.id], manager)).get(key.id) ?? [];

      const label = changes.label ?? null;
      const requestedAllowList = changes.ip_allow_list ?? null;
      // `[]` is a value: it clears the list.
      const ipAllowList =
        requestedAllowList === null ? null : canonicalizeIpAllowList(requestedAllowList);

      const labelChanged = label !== null && label !== key.label;
      const scopesChanged =
        scopes !== null &&
        !sameScopeSet(
          scopes.map((scope) => scope.scope),
          currentScopes.map((scope) => scope.scope),
        );
      const allowListChanged = ipAllowList !== null && !sameAllowList(ipAllowList, key.ipAllowList);
      if (!labelChanged && !scopesChanged && !allowListChanged) {
        throw ApiKeysException.nothingToUpdate();
      }
      if (
        ipAllowList !== null &&
        caller !== undefined &&
        caller.key_id === key.id &&
        !isIpAllowed(caller.ip, ipAllowList)
      ) {
        throw ApiKeysException.selfLockout();
      }

      if (scopes !== null && scopesChanged) {
        await this.replaceScopes(manager, key.id, currentScopes, scopes);
      }
      await this.keys.updateKey(
        key.id,
        {
          ...(labelChanged && label !== null ? { label } : {}),
          ...(allowListChanged && ipAllowList !== null ? { ipAllowList } : {}),
        },
        manager,
      );

      const updated = await this.findKey(accountId, keyId, manager);
      if (allowListChanged && ipAllowList !== null) {
        await this.announceAllowList(manager, {
          accountId,
          keyId,
          label: updated.label,
          previous: key.ipAllowList,
          next: ipAllowList,
          ...(caller ? { caller } : {}),
          at: updated.updatedAt,
        });
      }
      const updatedScopes = (await this.keys.scopesByKey([key.id], manager)).get(key.id) ?? [];
      return toApiKeyRecord(updated, updatedScopes);
    });
    this.events.changed(keyId, accountId);
    return record;
  }

  /** Records the allow list's change for the owners and administrators, in the transaction. */
  private async announceAllowList(
    manager: EntityManager,
    change: IpAllowListChange,
  ): Promise<void> {
    await enqueueEvent(
      manager,
      AccountsStreamSubjects.apiKeyIpAllowListChanged,
      ipAllowListChangedEvent(change),
    );
  }

  /**
   * The requested scopes, canonical and with their domains resolved; null when not requested.
   * An unknown key answers not_found before the domains service is asked anything.
   */
  private async grantRequestedScopes(
    accountId: string,
    keyId: string,
    requested: readonly string[] | null,
  ): Promise<GrantedScope[] | null> {
    if (requested === null) return null;
    const canonical = canonicalizeScopes(requested);
    if (scopeDomains(canonical).length > 0) {
      await this.findKey(accountId, keyId);
    }
    return this.domainScopes.grant(accountId, canonical);
  }

  async delete(accountId: string, keyId: string): Promise<MessageResponse> {
    const label = await this.keys.deleteKey(accountId, keyId);
    if (label === undefined) throw ApiKeysException.notFound();
    this.events.changed(keyId, accountId);
    return { message: `api key ${keyId} (${label}) deleted successfully` };
  }

  async verify(secretHash: string): Promise<VerifiedApiKey> {
    const row = await this.keys.findVerified(secretHash);
    if (!row) throw ApiKeysException.invalidApiKey();
    return {
      key_id: row.key_id,
      account_id: row.account_id,
      parent_account_id: row.parent_account_id,
      account_status: row.account_status,
      scopes: row.scopes,
      ip_allow_list: row.ip_allow_list,
    };
  }

  /** Applies a batch of uses reported by an edge; unparseable times are skipped. */
  async recordUses(uses: readonly ApiKeyUse[]): Promise<void> {
    const ids: string[] = [];
    const times: string[] = [];
    for (const use of uses) {
      const time = Date.parse(use.used_at);
      if (Number.isNaN(time)) continue;
      ids.push(use.key_id);
      times.push(new Date(time).toISOString());
    }
    if (ids.length === 0) return;
    await this.keys.recordUses(ids, times);
  }

  private async findKey(
    accountId: string,
    keyId: string,
    manager?: EntityManager,
  ): Promise<ApiKeyEntity> {
    const key = await this.keys.findKey(accountId, keyId, manager);
    if (!key) throw ApiKeysException.notFound();
    return key;
  }

  private async lockKey(
    accountId: string,
    keyId: string,
    manager: EntityManager,
  ): Promise<ApiKeyEntity> {
    const key = await this.keys.lockKey(accountId, keyId, manager);
    if (!key) throw ApiKeysException.notFound();
    return key;
  }

  /**
   * Scopes kept keep their records (id, created_at), with the domain id just resolved (a scope
   * granted before resolution existed gets one); removed ones go; new ones are granted.
   */
  private async replaceScopes(
    manager: EntityManager,
    apiKeyId: string,
    current: readonly ApiKeyScopeEntity[],
    next: readonly GrantedScope[],
  ): Promise<void> {
    const wanted = new Map(next.map((scope) => [scope.scope, scope]));
    const removed = current.filter((scope) => !wanted.has(scope.scope));
    if (removed.length > 0) {
      await this.keys.deleteScopes(
        removed.map((scope) => scope.id),
        manager,
      );
    }
    for (const scope of current) {
      const domainId = wanted.get(scope.scope)?.domainId;
      if (domainId && domainId !== scope.domainId) {
        await this.keys.setScopeDomainId(scope.id, domainId, manager);
      }
    }
    const held = new Set(current.map((scope) => scope.scope));
    await this.keys.insertScopes(
      apiKeyId,
      next.filter((scope) => !held.has(scope.scope)),
      manager,
    );
  }
}
