import { randomUUID } from 'node:crypto';

import {
  AccountsSubjects,
  type ApiKeyRecord,
  type ApiKeyUse,
  type CreateApiKeyBody,
  type CreatedApiKeyRecord,
  type UpdateApiKeyRequest,
  type VerifiedApiKey,
} from '@envoi/contracts-accounts';
import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { keysetPage } from '@envoi/shared-database';
import { RpcClient } from '@envoi/shared-nats';
import { isIpAllowed } from '@envoi/shared-net';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, In } from 'typeorm';

import { assertAccountExists } from '../accounts/account-lookup';
import { ApiKeyEntity } from './api-key.entity';
import { toApiKeyRecord, toCreatedApiKeyRecord } from './api-key.mapper';
import {
  canonicalizeIpAllowList,
  canonicalizeScopes,
  type CanonicalScope,
  sameAllowList,
  sameScopeSet,
} from './api-key-rules';
import { ApiKeyScopeEntity } from './api-key-scope.entity';
import { generateApiKey } from './api-key-secret';
import { ApiKeysException } from './api-keys.exception';

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
  private readonly logger = new Logger(ApiKeysService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly rpc: RpcClient,
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

  create(accountId: string, body: CreateApiKeyBody): Promise<CreatedApiKeyRecord> {
    return this.dataSource.transaction((manager) =>
      this.createInTransaction(manager, accountId, body),
    );
  }

  /** Creates a key inside the caller's transaction (account creation issues its first key). */
  async createInTransaction(
    manager: EntityManager,
    accountId: string,
    body: CreateApiKeyBody,
  ): Promise<CreatedApiKeyRecord> {
    const scopes = canonicalizeScopes(body.scopes);
    const ipAllowList = canonicalizeIpAllowList(body.ip_allow_list ?? []);
    await assertAccountExists(manager, accountId);
    const generated = generateApiKey();
    const key = manager.create(ApiKeyEntity, {
      id: randomUUID(),
      accountId,
      label: body.label,
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
   * Null or omitted fields stay unchanged; at least one provided value must differ. A key that
   * narrows its own allow list must keep the caller's address in it (spec 5.7); a parent managing
   * a sub-account's key sends no caller and has no such guard.
   */
  async update(request: UpdateApiKeyRequest): Promise<ApiKeyRecord> {
    const { account_id: accountId, key_id: keyId, changes, caller } = request;
    const record = await this.dataSource.transaction(async (manager) => {
      const key = await this.findKey(manager, accountId, keyId, true);
      const currentScopes = (await this.scopesByKey(manager, [key.id])).get(key.id) ?? [];

      const label = changes.label ?? null;
      const requestedScopes = changes.scopes ?? null;
      const requestedAllowList = changes.ip_allow_list ?? null;
      const scopes = requestedScopes === null ? null : canonicalizeScopes(requestedScopes);
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
    this.announceChange(keyId, accountId);
    return record;
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
    this.announceChange(keyId, accountId);
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
    scopes: readonly CanonicalScope[],
  ): Promise<ApiKeyScopeEntity[]> {
    if (scopes.length === 0) return [];
    const entities = scopes.map((scope, position) =>
      manager.create(ApiKeyScopeEntity, {
        id: randomUUID(),
        apiKeyId,
        scope: scope.scope,
        position,
        domain: scope.domain,
        domainId: null,
      }),
    );
    await manager.insert(ApiKeyScopeEntity, entities);
    return entities;
  }

  /** Scopes kept keep their records (id, created_at); removed ones go; new ones are granted. */
  private async replaceScopes(
    manager: EntityManager,
    apiKeyId: string,
    current: readonly ApiKeyScopeEntity[],
    next: readonly CanonicalScope[],
  ): Promise<void> {
    const wanted = new Set(next.map((scope) => scope.scope));
    const removed = current.filter((scope) => !wanted.has(scope.scope));
    if (removed.length > 0) {
      await manager.delete(ApiKeyScopeEntity, { id: In(removed.map((scope) => scope.id)) });
    }
    const held = new Set(current.map((scope) => scope.scope));
    await this.insertScopes(
      manager,
      apiKeyId,
      next.filter((scope) => !held.has(scope.scope)),
    );
  }

  /** Tells every gateway replica to drop its cached verification of the key. */
  private announceChange(keyId: string, accountId: string): void {
    try {
      this.rpc.emit(AccountsSubjects.apiKeyChanged, { key_id: keyId, account_id: accountId });
    } catch (error) {
      this.logger.error(`could not announce the change of api key ${keyId}: ${String(error)}`);
    }
  }
}
