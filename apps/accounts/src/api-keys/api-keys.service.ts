import { randomUUID } from 'node:crypto';

import {
  ALL_ACCESS_SCOPES,
  type ApiKeyRecord,
  type ApiKeyUse,
  type CreateApiKeyBody,
  type CreatedApiKeyRecord,
  type UpdateApiKeyRequest,
  type VerifiedApiKey,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { keysetPage } from '@envoi/shared-database';
import { isIpAllowed } from '@envoi/shared-net';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, In } from 'typeorm';

import { assertAccountExists } from '../accounts/account-lookup';
import { ApiKeyEntity } from './api-key.entity';
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
import { ApiKeyScopeEntity } from './api-key-scope.entity';
import { generateApiKey } from './api-key-secret';
import { ApiKeysException } from './api-keys.exception';
import { DomainScopesService } from './domain-scopes.service';

interface VerifiedRow {
  key_id: string;
  account_id: string;
  parent_account_id: string | null;
  scopes: string[];
  ip_allow_list: string[];
}

/**
 * One indexed lookup by hash (unique index), joined to the account, scopes aggregated in
 * grant order: the whole verification costs a single round trip.
 */
const VERIFY_SQL = `
  SELECT k.id AS key_id,
         k.account_id,
         a.parent_account_id,
         k.ip_allow_list,
         ARRAY(
           SELECT s.scope FROM accounts.api_key_scopes s
           WHERE s.api_key_id = k.id
           ORDER BY s.created_at, s.position
         ) AS scopes
  FROM accounts.api_keys k
  JOIN accounts.accounts a ON a.id = k.account_id
  WHERE k.secret_hash = $1`;

/**
 * Applies a batch of last-use times in one statement. Several uses of one key collapse to the
 * latest; times ahead of the database clock are clamped to it; a row is written only when its
 * time moves forward.
 */
const RECORD_USES_SQL = `
  UPDATE accounts.api_keys AS k
  SET last_used_at = GREATEST(COALESCE(k.last_used_at, '-infinity'), u.used_at)
  FROM (
    SELECT id, LEAST(max(used_at), now()) AS used_at
    FROM unnest($1::uuid[], $2::timestamptz[]) AS t(id, used_at)
    GROUP BY id
  ) AS u
  WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.used_at)`;

export const FULL_ACCESS_LABEL = 'Full access';

@Injectable()
export class ApiKeysService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly domainScopes: DomainScopesService,
    private readonly events: ApiKeyEvents,
  ) {}

  async list(accountId: string, page: PageRequest): Promise<Page<ApiKeyRecord>> {
    const manager = this.dataSource.manager;
    await assertAccountExists(manager, accountId);
    const result = await keysetPage(
      manager
        .createQueryBuilder(ApiKeyEntity, 'apiKey')
        .where('apiKey.accountId = :accountId', { accountId }),
      'apiKey',
      page,
    );
    const scopes = await this.scopesByKey(
      manager,
      result.data.map((key) => key.id),
    );
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
      await assertAccountExists(this.dataSource.manager, accountId);
    }
    const scopes = await this.domainScopes.grant(accountId, canonical);
    return this.dataSource.transaction(async (manager) => {
      await this.domainScopes.holdDomains(manager, scopes);
      return this.insertKey(manager, accountId, body.label, scopes, ipAllowList);
    });
  }

  /** Issues a full-access key inside the caller's transaction (an account's first key). */
  createFullAccessInTransaction(
    manager: EntityManager,
    accountId: string,
  ): Promise<CreatedApiKeyRecord> {
    const scopes = grantWithoutDomains(canonicalizeScopes(ALL_ACCESS_SCOPES));
    return this.insertKey(manager, accountId, FULL_ACCESS_LABEL, scopes, []);
  }

  private async insertKey(
    manager: EntityManager,
    accountId: string,
    label: string,
    scopes: readonly GrantedScope[],
    ipAllowList: string[],
  ): Promise<CreatedApiKeyRecord> {
    await assertAccountExists(manager, accountId);
    const generated = generateApiKey();
    const key = manager.create(ApiKeyEntity, {
      id: randomUUID(),
      accountId,
      label,
      publicKey: generated.publicKey,
      secretHash: generated.secretHash,
      ipAllowList,
      lastUsedAt: null,
    });
    await manager.insert(ApiKeyEntity, key);
    const scopeEntities = await this.insertScopes(manager, key.id, scopes);
    return toCreatedApiKeyRecord(toApiKeyRecord(key, scopeEntities), generated.secretKey);
  }

  async get(accountId: string, keyId: string): Promise<ApiKeyRecord> {
    const manager = this.dataSource.manager;
    const key = await this.findKey(manager, accountId, keyId);
    const scopes = await this.scopesByKey(manager, [key.id]);
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
      const key = await this.findKey(manager, accountId, keyId, true);
      const currentScopes = (await this.scopesByKey(manager, [key.id])).get(key.id) ?? [];

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
      await manager
        .createQueryBuilder()
        .update(ApiKeyEntity)
        .set({
          ...(labelChanged && label !== null ? { label } : {}),
          ...(allowListChanged && ipAllowList !== null ? { ipAllowList } : {}),
          updatedAt: () => 'now()',
        })
        .where('id = :id', { id: key.id })
        .execute();

      const updated = await this.findKey(manager, accountId, keyId);
      const updatedScopes = (await this.scopesByKey(manager, [key.id])).get(key.id) ?? [];
      return toApiKeyRecord(updated, updatedScopes);
    });
    this.events.changed(keyId, accountId);
    return record;
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
      await this.findKey(this.dataSource.manager, accountId, keyId);
    }
    return this.domainScopes.grant(accountId, canonical);
  }

  async delete(accountId: string, keyId: string): Promise<MessageResponse> {
    const result = await this.dataSource
      .createQueryBuilder()
      .delete()
      .from(ApiKeyEntity)
      .where('id = :keyId AND account_id = :accountId', { keyId, accountId })
      .returning(['label'])
      .execute();
    const deleted = (result.raw as Array<{ label: string }>)[0];
    if (!deleted) throw ApiKeysException.notFound();
    this.events.changed(keyId, accountId);
    return { message: `api key ${keyId} (${deleted.label}) deleted successfully` };
  }

  async verify(secretHash: string): Promise<VerifiedApiKey> {
    const rows: VerifiedRow[] = await this.dataSource.query(VERIFY_SQL, [secretHash]);
    const row = rows[0];
    if (!row) throw ApiKeysException.invalidApiKey();
    return {
      key_id: row.key_id,
      account_id: row.account_id,
      parent_account_id: row.parent_account_id,
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
    await this.dataSource.query(RECORD_USES_SQL, [ids, times]);
  }

  private async findKey(
    manager: EntityManager,
    accountId: string,
    keyId: string,
    forUpdate = false,
  ): Promise<ApiKeyEntity> {
    const key = await manager.findOne(ApiKeyEntity, {
      where: { id: keyId, accountId },
      ...(forUpdate ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!key) throw ApiKeysException.notFound();
    return key;
  }

  /** Scopes per key, in grant order: earlier grants first, then request order within a grant. */
  private async scopesByKey(
    manager: EntityManager,
    keyIds: readonly string[],
  ): Promise<Map<string, ApiKeyScopeEntity[]>> {
    const byKey = new Map<string, ApiKeyScopeEntity[]>();
    if (keyIds.length === 0) return byKey;
    const scopes = await manager.find(ApiKeyScopeEntity, {
      where: { apiKeyId: In([...keyIds]) },
      order: { createdAt: 'ASC', position: 'ASC' },
    });
    for (const scope of scopes) {
      const list = byKey.get(scope.apiKeyId) ?? [];
      list.push(scope);
      byKey.set(scope.apiKeyId, list);
    }
    return byKey;
  }

  private async insertScopes(
    manager: EntityManager,
    apiKeyId: string,
    scopes: readonly GrantedScope[],
  ): Promise<ApiKeyScopeEntity[]> {
    if (scopes.length === 0) return [];
    const entities = scopes.map((scope, position) =>
      manager.create(ApiKeyScopeEntity, {
        id: randomUUID(),
        apiKeyId,
        scope: scope.scope,
        position,
        domain: scope.domain,
        domainId: scope.domainId,
      }),
    );
    await manager.insert(ApiKeyScopeEntity, entities);
    return entities;
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
      await manager.delete(ApiKeyScopeEntity, { id: In(removed.map((scope) => scope.id)) });
    }
    for (const scope of current) {
      const domainId = wanted.get(scope.scope)?.domainId;
      if (domainId && domainId !== scope.domainId) {
        await manager.update(ApiKeyScopeEntity, { id: scope.id }, { domainId });
      }
    }
    const held = new Set(current.map((scope) => scope.scope));
    await this.insertScopes(
      manager,
      apiKeyId,
      next.filter((scope) => !held.has(scope.scope)),
    );
  }
}
