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

/**
 * Advisory locks on a domain's scopes: this namespace plus `hashtext(domain id)`. Grants hold
 * them shared, the deletion handler exclusive, so the two never interleave for one domain.
 */
const DOMAIN_LOCK_NAMESPACE = 0x656e7601;

const LOCK_DOMAINS_SHARED_SQL = `
  SELECT pg_advisory_xact_lock_shared(${DOMAIN_LOCK_NAMESPACE}, hashtext(id::text))
  FROM unnest($1::uuid[]) AS id`;

const LOCK_DOMAIN_SQL = `SELECT pg_advisory_xact_lock(${DOMAIN_LOCK_NAMESPACE}, hashtext($1::uuid::text))`;

const DELETED_AMONG_SQL = `
  SELECT domain_id FROM accounts.deleted_domains WHERE domain_id = ANY($1::uuid[])`;

const RECORD_DELETION_SQL = `
  INSERT INTO accounts.deleted_domains (domain_id, account_id, domain, deleted_at)
  VALUES ($1, $2, $3, $4)
  ON CONFLICT (domain_id) DO NOTHING`;

/**
 * A scope names the deleted domain ($1 id, $2 name, $3 deletion time): by id; or, granted before
 * domain ids were resolved, by name, if it is older than the deletion (a younger one names a
 * domain of that name created since).
 */
const NAMES_DOMAIN = `(s.domain_id = $1
  OR (s.domain_id IS NULL AND s.domain = $2 AND s.created_at <= $3::timestamptz))`;

/**
 * The account's keys holding such a scope, locked in id order: keys before their scopes, as a
 * key's update or deletion locks them, so that neither can deadlock with this.
 */
const LOCK_KEYS_SQL = `
  SELECT k.id FROM accounts.api_keys k
  WHERE k.account_id = $4
    AND EXISTS (SELECT 1 FROM accounts.api_key_scopes s WHERE s.api_key_id = k.id AND ${NAMES_DOMAIN})
  ORDER BY k.id
  FOR UPDATE OF k`;

const REMOVE_SCOPES_SQL = `
  DELETE FROM accounts.api_key_scopes s
  WHERE s.api_key_id = ANY($4::uuid[]) AND ${NAMES_DOMAIN}`;

const TOUCH_KEYS_SQL = `UPDATE accounts.api_keys SET updated_at = now() WHERE id = ANY($1::uuid[])`;

/** Handled deletions are remembered this long: far beyond the time between resolving and storing. */
const DELETION_MEMORY = '1 day';
const PURGE_BATCH = 1_000;

const PURGE_DELETIONS_SQL = `
  DELETE FROM accounts.deleted_domains
  WHERE domain_id IN (
    SELECT domain_id FROM accounts.deleted_domains
    WHERE recorded_at < now() - interval '${DELETION_MEMORY}'
    LIMIT ${PURGE_BATCH}
  )`;

/**
 * Domain scopes against the domains service: a grant names only owned domains (resolved over the
 * bus, stored with their ids), and a domain's deletion removes the scopes that name it.
 */
@Injectable()
export class DomainScopesService {
  private readonly logger = new Logger(DomainScopesService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
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
    await manager.query(LOCK_DOMAINS_SHARED_SQL, [ids]);
    const rows: Array<{ domain_id: string }> = await manager.query(DELETED_AMONG_SQL, [ids]);
    const deleted = new Set(rows.map((row) => row.domain_id));
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
      await manager.query(LOCK_DOMAIN_SQL, [deletion.domain_id]);
      await manager.query(RECORD_DELETION_SQL, [
        deletion.domain_id,
        deletion.account_id,
        deletion.domain,
        deletion.deleted_at,
      ]);
      await manager.query(PURGE_DELETIONS_SQL);
      const domain = [deletion.domain_id, deletion.domain, deletion.deleted_at];
      const keys: Array<{ id: string }> = await manager.query(LOCK_KEYS_SQL, [
        ...domain,
        deletion.account_id,
      ]);
      const ids = keys.map((key) => key.id);
      if (ids.length === 0) return ids;
      await manager.query(REMOVE_SCOPES_SQL, [...domain, ids]);
      await manager.query(TOUCH_KEYS_SQL, [ids]);
      return ids;
    });
    for (const keyId of keyIds) this.events.changed(keyId, deletion.account_id);
    return keyIds;
  }
}
