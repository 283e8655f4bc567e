import { randomUUID } from 'node:crypto';

import type { AccountStatus } from '@envoi/contracts-accounts';
import type { Page, PageRequest } from '@envoi/contracts-core';
import { keysetPage } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type DeepPartial, type EntityManager, In } from 'typeorm';

import { accountStatusSql } from '../accounts/account-status';
import { ApiKeyEntity } from './api-key.entity';
import type { GrantedScope } from './api-key-rules';
import { ApiKeyScopeEntity } from './api-key-scope.entity';

export interface VerifiedKeyRow {
  key_id: string;
  account_id: string;
  parent_account_id: string | null;
  account_status: AccountStatus;
  scopes: string[];
  ip_allow_list: string[];
}

/**
 * One indexed lookup by hash (unique index), joined to the account and its parent (for the
 * status), scopes aggregated in grant order: the whole verification costs a single round trip.
 */
const VERIFY_SQL = `
  SELECT k.id AS key_id,
         k.account_id,
         a.parent_account_id,
         ${accountStatusSql('a', 'p')} AS account_status,
         k.ip_allow_list,
         ARRAY(
           SELECT s.scope FROM accounts.api_key_scopes s
           WHERE s.api_key_id = k.id
           ORDER BY s.created_at, s.position
         ) AS scopes
  FROM accounts.api_keys k
  JOIN accounts.accounts a ON a.id = k.account_id
  LEFT JOIN accounts.accounts p ON p.id = a.parent_account_id
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

/** The statements on accounts.api_keys and their scopes (accounts.api_key_scopes). */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  page(accountId: string, page: PageRequest): Promise<Page<ApiKeyEntity>> {
    return keysetPage(
      this.dataSource.manager
        .createQueryBuilder(ApiKeyEntity, 'apiKey')
        .where('apiKey.accountId = :accountId', { accountId }),
      'apiKey',
      page,
    );
  }

  findKey(
    accountId: string,
    keyId: string,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<ApiKeyEntity | null> {
    return manager.findOne(ApiKeyEntity, { where: { id: keyId, accountId } });
  }

  /** Like findKey, holding the row locked until the transaction ends. */
  lockKey(accountId: string, keyId: string, manager: EntityManager): Promise<ApiKeyEntity | null> {
    return manager.findOne(ApiKeyEntity, {
      where: { id: keyId, accountId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  async insertKey(
    fields: DeepPartial<ApiKeyEntity>,
    manager: EntityManager,
  ): Promise<ApiKeyEntity> {
    const key = manager.create(ApiKeyEntity, { id: randomUUID(), ...fields });
    await manager.insert(ApiKeyEntity, key);
    return key;
  }

  /** Changes the label and allow list given, and `updated_at`. */
  async updateKey(
    keyId: string,
    changes: { label?: string; ipAllowList?: string[] },
    manager: EntityManager,
  ): Promise<void> {
    await manager
      .createQueryBuilder()
      .update(ApiKeyEntity)
      .set({ ...changes, updatedAt: () => 'now()' })
      .where('id = :id', { id: keyId })
      .execute();
  }

  /** Deletes the key (its scopes go with it); answers its label, or undefined when none was. */
  async deleteKey(accountId: string, keyId: string): Promise<string | undefined> {
    const result = await this.dataSource
      .createQueryBuilder()
      .delete()
      .from(ApiKeyEntity)
      .where('id = :keyId AND account_id = :accountId', { keyId, accountId })
      .returning(['label'])
      .execute();
    return (result.raw as Array<{ label: string }>)[0]?.label;
  }

  async findVerified(secretHash: string): Promise<VerifiedKeyRow | undefined> {
    const rows: VerifiedKeyRow[] = await this.dataSource.query(VERIFY_SQL, [secretHash]);
    return rows[0];
  }

  /** Moves each key's last use forward to its time (ISO), clamped to the database clock. */
  async recordUses(keyIds: readonly string[], usedAt: readonly string[]): Promise<void> {
    await this.dataSource.query(RECORD_USES_SQL, [keyIds, usedAt]);
  }

  /** Scopes per key, in grant order: earlier grants first, then request order within a grant. */
  async scopesByKey(
    keyIds: readonly string[],
    manager: EntityManager = this.dataSource.manager,
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

  /** Grants the scopes to the key, positioned in the given order. */
  async insertScopes(
    apiKeyId: string,
    scopes: readonly GrantedScope[],
    manager: EntityManager,
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

  async deleteScopes(scopeIds: readonly string[], manager: EntityManager): Promise<void> {
    await manager.delete(ApiKeyScopeEntity, { id: In([...scopeIds]) });
  }

  async setScopeDomainId(scopeId: string, domainId: string, manager: EntityManager): Promise<void> {
    await manager.update(ApiKeyScopeEntity, { id: scopeId }, { domainId });
  }
}
