import { randomUUID } from 'node:crypto';

import type { Page, PageRequest } from '@envoi/contracts-core';
import { keysetPage, preparedQuery } from '@envoi/shared-database';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { SuppressionEntity, type SuppressionSource } from './suppression.entity';
import type { ListCriteria } from './suppression-inputs';

export interface NewSuppression {
  accountId: string;
  email: string;
  domain: string | null;
  reason: string | null;
  expiresAt: Date;
  source: SuppressionSource;
}

/** Expired rows with the key of a new suppression make way for it (they are no suppressions). */
const DELETE_EXPIRED_SAME_KEY_SQL = `
  DELETE FROM suppressions.suppressions
  WHERE account_id = $1 AND email = $2 AND domain IS NOT DISTINCT FROM $3 AND expires_at <= now()`;

/** The expired rows with the keys of new automatic suppressions (they make way for them). */
const DELETE_EXPIRED_KEYS_SQL = `
  DELETE FROM suppressions.suppressions AS s
  USING unnest($1::uuid[], $2::varchar[], $3::varchar[]) AS k(account_id, email, domain)
  WHERE s.account_id = k.account_id AND s.email = k.email AND s.domain = k.domain
    AND s.expires_at <= now()`;

/**
 * Inserts, in the given order, the automatic suppressions no unexpired suppression covers yet
 * (the domain's own or an account-wide one); one inserted at the same time by another
 * transaction is skipped (ON CONFLICT). Answers the ids inserted.
 */
const INSERT_AUTOMATIC_SQL = `
  INSERT INTO suppressions.suppressions
    (id, account_id, email, domain, reason, created_at, expires_at, source)
  SELECT n.id, n.account_id, n.email, n.domain, n.reason, $6, $7, 'automatic'
  FROM unnest($1::uuid[], $2::uuid[], $3::varchar[], $4::varchar[], $5::varchar[])
    WITH ORDINALITY AS n(id, account_id, email, domain, reason, position)
  WHERE NOT EXISTS (
    SELECT 1 FROM suppressions.suppressions AS s
    WHERE s.account_id = n.account_id AND s.email = n.email
      AND (s.domain IS NULL OR s.domain = n.domain) AND s.expires_at > now()
  )
  ORDER BY n.position
  ON CONFLICT DO NOTHING
  RETURNING id`;

/** An automatic suppression to insert: always for one sending domain. */
export interface NewAutomaticSuppression {
  accountId: string;
  email: string;
  domain: string;
  reason: string;
}

/**
 * The unexpired suppression covering each address for the sender domain: its own domain's when
 * there is one, else the account-wide one (newest first within each).
 */
const CHECK_SQL = `
  SELECT DISTINCT ON (email) email, reason
  FROM suppressions.suppressions
  WHERE account_id = $1
    AND email = ANY($2::text[])
    AND (domain IS NULL OR domain = $3)
    AND expires_at > now()
  ORDER BY email, (domain IS NULL), created_at DESC`;

/** The account's unexpired suppressions, up to $2 rows (the caller asks one more than it keeps). */
const SNAPSHOT_SQL = `
  SELECT email, domain, reason, expires_at
  FROM suppressions.suppressions
  WHERE account_id = $1 AND expires_at > now()
  LIMIT $2`;

/** Deletes matching rows, expired ones included; counts the unexpired ones (the suppressions). */
function deleteSql(condition: string): string {
  return `
    WITH deleted AS (
      DELETE FROM suppressions.suppressions WHERE ${condition} RETURNING expires_at
    )
    SELECT (count(*) FILTER (WHERE expires_at > now()))::int AS live FROM deleted`;
}

/**
 * Deletes up to $1 expired suppressions, oldest expiry first. Replicas purging at the same time
 * skip each other's rows (SKIP LOCKED) instead of waiting for them.
 */
const PURGE_SQL = `
  WITH purged AS (
    DELETE FROM suppressions.suppressions
    WHERE id IN (
      SELECT id FROM suppressions.suppressions
      WHERE expires_at <= now()
      ORDER BY expires_at
      LIMIT $1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*)::int AS purged FROM purged`;

/** The statements on suppressions.suppressions. */
@Injectable()
export class SuppressionsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Unexpired suppressions of the account matching the criteria, newest first. */
  async page(
    accountId: string,
    criteria: ListCriteria,
    page: PageRequest,
  ): Promise<Page<SuppressionEntity>> {
    const query = this.dataSource.manager
      .createQueryBuilder(SuppressionEntity, 'suppression')
      .where('suppression.accountId = :accountId', { accountId })
      .andWhere('suppression.expiresAt > now()');
    if (criteria.email !== undefined) {
      query.andWhere('suppression.email = :email', { email: criteria.email });
    }
    if (criteria.domain !== undefined) {
      query.andWhere('suppression.domain = :domain', { domain: criteria.domain });
    }
    if (criteria.from !== undefined) {
      query.andWhere('suppression.createdAt >= :from', { from: criteria.from });
    }
    if (criteria.to !== undefined) {
      query.andWhere('suppression.createdAt < :to', { to: criteria.to });
    }
    return keysetPage(query, 'suppression', page);
  }

  /** The unexpired suppression that already covers the address for the domain, if any. */
  async findCovering(fields: NewSuppression): Promise<SuppressionEntity | null> {
    const query = this.dataSource.manager
      .createQueryBuilder(SuppressionEntity, 'suppression')
      .where('suppression.accountId = :accountId', { accountId: fields.accountId })
      .andWhere('suppression.email = :email', { email: fields.email })
      .andWhere('suppression.expiresAt > now()');
    if (fields.domain === null) query.andWhere('suppression.domain IS NULL');
    else {
      query.andWhere('(suppression.domain IS NULL OR suppression.domain = :domain)', {
        domain: fields.domain,
      });
    }
    // At most two rows (the domain's and the account-wide one); the domain's is the closer match.
    const rows = await query.getMany();
    return rows.find((row) => row.domain !== null) ?? rows[0] ?? null;
  }

  /**
   * Inserts a new suppression after deleting an expired one with its key. Fails with a unique
   * violation (GLOBAL_KEY or DOMAIN_KEY) when an unexpired suppression has the key.
   */
  async insert(
    fields: NewSuppression,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<SuppressionEntity> {
    const suppression = manager.create(SuppressionEntity, {
      id: randomUUID(),
      createdAt: new Date(),
      ...fields,
    });
    await manager.query(DELETE_EXPIRED_SAME_KEY_SQL, [
      suppression.accountId,
      suppression.email,
      suppression.domain,
    ]);
    await manager.insert(SuppressionEntity, suppression);
    return suppression;
  }

  /**
   * Inserts the automatic suppressions that no unexpired suppression covers, in two statements
   * whatever their number, all created at `createdAt` and expiring at `expiresAt`. Answers, for
   * each in order, the row inserted or null (already covered).
   */
  async insertAutomatic(
    suppressions: readonly NewAutomaticSuppression[],
    createdAt: Date,
    expiresAt: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<Array<SuppressionEntity | null>> {
    if (suppressions.length === 0) return [];
    const rows = suppressions.map((fields) =>
      manager.create(SuppressionEntity, {
        id: randomUUID(),
        ...fields,
        createdAt,
        expiresAt,
        source: 'automatic',
      }),
    );
    const keys = [
      rows.map((row) => row.accountId),
      rows.map((row) => row.email),
      rows.map((row) => row.domain),
    ];
    await manager.query(DELETE_EXPIRED_KEYS_SQL, keys);
    const inserted = await manager.query<Array<{ id: string }>>(INSERT_AUTOMATIC_SQL, [
      rows.map((row) => row.id),
      ...keys,
      rows.map((row) => row.reason),
      createdAt,
      expiresAt,
    ]);
    const insertedIds = new Set(inserted.map(({ id }) => id));
    return rows.map((row) => (insertedIds.has(row.id) ? row : null));
  }

  /** The reason of the unexpired suppression covering each address for the sender domain. */
  async reasonsFor(
    accountId: string,
    emails: readonly string[],
    senderDomain: string,
  ): Promise<Map<string, string | null>> {
    // Asked for every send: prepared once per connection.
    const rows = await preparedQuery<{ email: string; reason: string | null }>(
      this.dataSource.manager,
      CHECK_SQL,
      [accountId, emails, senderDomain],
    );
    return new Map(rows.map((row) => [row.email, row.reason]));
  }

  /** The account's unexpired suppressions, or null when it has more than `max`. */
  async snapshot(
    accountId: string,
    max: number,
  ): Promise<Array<Pick<SuppressionEntity, 'email' | 'domain' | 'reason' | 'expiresAt'>> | null> {
    const rows = await preparedQuery<{
      email: string;
      domain: string | null;
      reason: string | null;
      expires_at: Date;
    }>(this.dataSource.manager, SNAPSHOT_SQL, [accountId, max + 1]);
    if (rows.length > max) return null;
    return rows.map((row) => ({
      email: row.email,
      domain: row.domain,
      reason: row.reason,
      expiresAt: row.expires_at,
    }));
  }

  /** Deletes the address's suppressions, or its one of `domain`; counts the unexpired ones. */
  deleteForEmail(accountId: string, email: string, domain: string | undefined): Promise<number> {
    return domain === undefined
      ? this.deleteWhere('account_id = $1 AND email = $2', [accountId, email])
      : this.deleteWhere('account_id = $1 AND email = $2 AND domain = $3', [
          accountId,
          email,
          domain,
        ]);
  }

  /** Deletes the account's suppressions, or those of `domain`; counts the unexpired ones. */
  deleteForAccount(accountId: string, domain: string | undefined): Promise<number> {
    return domain === undefined
      ? this.deleteWhere('account_id = $1', [accountId])
      : this.deleteWhere('account_id = $1 AND domain = $2', [accountId, domain]);
  }

  /** Deletes up to `limit` expired suppressions; returns how many. */
  async purgeExpired(limit: number): Promise<number> {
    const rows = await this.dataSource.query<Array<{ purged: number }>>(PURGE_SQL, [limit]);
    return rows[0]?.purged ?? 0;
  }

  private async deleteWhere(condition: string, parameters: unknown[]): Promise<number> {
    const rows = await this.dataSource.query<Array<{ live: number }>>(
      deleteSql(condition),
      parameters,
    );
    return rows[0]?.live ?? 0;
  }
}
