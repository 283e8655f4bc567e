import type { DomainDeletedData } from '@envoi/contracts-domains';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

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
 * The statements behind domain scopes: the per-domain advisory locks, the handled deletions
 * (accounts.deleted_domains) and the removal of the scopes naming a deleted domain. Every one
 * runs inside the caller's transaction.
 */
@Injectable()
export class DomainScopesRepository {
  /** Holds the domains' locks shared until the transaction ends. */
  async lockDomainsShared(domainIds: readonly string[], manager: EntityManager): Promise<void> {
    await manager.query(LOCK_DOMAINS_SHARED_SQL, [domainIds]);
  }

  /** Holds the domain's lock exclusively until the transaction ends. */
  async lockDomain(domainId: string, manager: EntityManager): Promise<void> {
    await manager.query(LOCK_DOMAIN_SQL, [domainId]);
  }

  /** Those of the domains whose deletion has been handled. */
  async deletedAmong(domainIds: readonly string[], manager: EntityManager): Promise<Set<string>> {
    const rows: Array<{ domain_id: string }> = await manager.query(DELETED_AMONG_SQL, [domainIds]);
    return new Set(rows.map((row) => row.domain_id));
  }

  /** Remembers the deletion (once) and forgets those older than DELETION_MEMORY. */
  async recordDeletion(deletion: DomainDeletedData, manager: EntityManager): Promise<void> {
    await manager.query(RECORD_DELETION_SQL, [
      deletion.domain_id,
      deletion.account_id,
      deletion.domain,
      deletion.deleted_at,
    ]);
    await manager.query(PURGE_DELETIONS_SQL);
  }

  /**
   * Removes the scopes naming the deleted domain from the account's keys, marking those keys
   * updated; answers their ids.
   */
  async removeScopesNaming(deletion: DomainDeletedData, manager: EntityManager): Promise<string[]> {
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
  }
}
