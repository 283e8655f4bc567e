import { randomUUID } from 'node:crypto';

import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { normalizeDomainName } from '@envoi/contracts-core';
import {
  type AutomaticSuppressionResult,
  type CheckSuppressionsResult,
  type CreateAutomaticSuppressionRequest,
  type CreateSuppressionBody,
  normalizeEmail,
  type SuppressionFilters,
  type SuppressionRecord,
  SuppressionsStreamSubjects,
} from '@envoi/contracts-suppressions';
import { isUniqueViolation, keysetPage } from '@envoi/shared-database';
import { enqueueEvent, OutboxRelayService } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { SuppressionsConfig } from '../suppressions.config';
import { AccountDomains } from './account-domains.service';
import {
  DOMAIN_KEY,
  GLOBAL_KEY,
  SuppressionEntity,
  type SuppressionSource,
} from './suppression.entity';
import {
  deletedMessage,
  toCheckResult,
  toCreatedEventData,
  toSuppressionRecord,
} from './suppression.mapper';
import {
  instant,
  listCriteria,
  optionalDomain,
  requireDomain,
  requireEmail,
} from './suppression-inputs';
import { SuppressionsException } from './suppressions.exception';

/** Expired rows with the key of a new suppression make way for it (they are no suppressions). */
const DELETE_EXPIRED_SAME_KEY_SQL = `
  DELETE FROM suppressions.suppressions
  WHERE account_id = $1 AND email = $2 AND domain IS NOT DISTINCT FROM $3 AND expires_at <= now()`;

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

/** Deletes matching rows, expired ones included; counts the unexpired ones (the suppressions). */
function deleteSql(condition: string): string {
  return `
    WITH deleted AS (
      DELETE FROM suppressions.suppressions WHERE ${condition} RETURNING expires_at
    )
    SELECT (count(*) FILTER (WHERE expires_at > now()))::int AS live FROM deleted`;
}

interface NewSuppression {
  accountId: string;
  email: string;
  domain: string | null;
  reason: string | null;
  expiresAt: Date;
  source: SuppressionSource;
}

@Injectable()
export class SuppressionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: SuppressionsConfig,
    private readonly outbox: OutboxRelayService,
    private readonly domains: AccountDomains,
  ) {}

  /** Unexpired suppressions, newest first; `suppressions.domain_not_found` for a domain not owned. */
  async list(
    accountId: string,
    filters: SuppressionFilters | undefined,
    page: PageRequest,
  ): Promise<Page<SuppressionRecord>> {
    const criteria = listCriteria(filters);
    if (criteria.domain !== undefined) await this.domains.requireOwned(accountId, criteria.domain);
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
    const result = await keysetPage(query, 'suppression', page);
    return { ...result, data: result.data.map(toSuppressionRecord) };
  }

  async create(accountId: string, body: CreateSuppressionBody): Promise<SuppressionRecord> {
    const suppression = await this.insert({
      accountId,
      email: requireEmail(body.email),
      domain: optionalDomain(body.domain),
      reason: body.reason ?? null,
      expiresAt: futureInstant(body.expires_at),
      source: 'manual',
    });
    if (!suppression) throw SuppressionsException.alreadyExists();
    return toSuppressionRecord(suppression);
  }

  /** Idempotent: an address an unexpired suppression already covers is left as it is. */
  async createAutomatic(
    request: CreateAutomaticSuppressionRequest,
  ): Promise<AutomaticSuppressionResult> {
    const fields: NewSuppression = {
      accountId: request.account_id,
      email: requireEmail(request.email),
      domain: optionalDomain(request.domain),
      reason: request.reason,
      expiresAt:
        request.expires_at === undefined
          ? new Date(Date.now() + this.config.SUPPRESSION_AUTOMATIC_TTL_MS)
          : futureInstant(request.expires_at),
      source: 'automatic',
    };
    // Twice at most: a concurrent creation between the look-up and the insert is found next time.
    for (let attempt = 0; attempt < 2; attempt++) {
      const existing = await this.findCovering(fields);
      if (existing) return { created: false, suppression: toSuppressionRecord(existing) };
      const inserted = await this.insert(fields);
      if (inserted) return { created: true, suppression: toSuppressionRecord(inserted) };
    }
    throw SuppressionsException.alreadyExists();
  }

  /** Deletes the address's suppressions: all of them, or the one of `domain` only. */
  async delete(
    accountId: string,
    rawEmail: string,
    rawDomain: string | undefined,
  ): Promise<MessageResponse> {
    const email = requireEmail(rawEmail);
    const domain = rawDomain === undefined ? undefined : requireDomain(rawDomain);
    const deleted =
      domain === undefined
        ? await this.deleteWhere('account_id = $1 AND email = $2', [accountId, email])
        : await this.deleteWhere('account_id = $1 AND email = $2 AND domain = $3', [
            accountId,
            email,
            domain,
          ]);
    if (deleted === 0) throw SuppressionsException.notFound();
    return { message: deletedMessage(deleted) };
  }

  /** Deletes every suppression of the account, or those of `domain` only (a domain it owns). */
  async wipe(accountId: string, rawDomain: string | undefined): Promise<MessageResponse> {
    const domain = rawDomain === undefined ? undefined : requireDomain(rawDomain);
    if (domain !== undefined) await this.domains.requireOwned(accountId, domain);
    const deleted =
      domain === undefined
        ? await this.deleteWhere('account_id = $1', [accountId])
        : await this.deleteWhere('account_id = $1 AND domain = $2', [accountId, domain]);
    return { message: deletedMessage(deleted) };
  }

  /** Which of the addresses may not be sent to from the sender domain (one query). */
  async check(
    accountId: string,
    senderDomain: string,
    emails: readonly string[],
  ): Promise<CheckSuppressionsResult> {
    const normalized = [...new Set(emails.map(normalizeEmail))];
    const rows = await this.dataSource.query<Array<{ email: string; reason: string | null }>>(
      CHECK_SQL,
      [accountId, normalized, normalizeDomainName(senderDomain)],
    );
    return toCheckResult(emails, new Map(rows.map((row) => [row.email, row.reason])));
  }

  /**
   * Inserts the suppression and its `suppression.created` event in one transaction; null when an
   * unexpired suppression has the same account, address and domain.
   */
  private async insert(fields: NewSuppression): Promise<SuppressionEntity | null> {
    const suppression = this.dataSource.manager.create(SuppressionEntity, {
      id: randomUUID(),
      createdAt: new Date(),
      ...fields,
    });
    try {
      await this.dataSource.transaction(async (manager) => {
        await manager.query(DELETE_EXPIRED_SAME_KEY_SQL, [
          suppression.accountId,
          suppression.email,
          suppression.domain,
        ]);
        await manager.insert(SuppressionEntity, suppression);
        await enqueueEvent(manager, SuppressionsStreamSubjects.created, {
          id: randomUUID(),
          type: 'suppression.created',
          timestamp: suppression.createdAt.toISOString(),
          data: toCreatedEventData(suppression),
        });
      });
    } catch (error) {
      if (isUniqueViolation(error, GLOBAL_KEY) || isUniqueViolation(error, DOMAIN_KEY)) return null;
      throw error;
    }
    this.outbox.notify();
    return suppression;
  }

  /** The unexpired suppression that already covers the address for the domain, if any. */
  private async findCovering(fields: NewSuppression): Promise<SuppressionEntity | null> {
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

  private async deleteWhere(condition: string, parameters: unknown[]): Promise<number> {
    const rows = await this.dataSource.query<Array<{ live: number }>>(
      deleteSql(condition),
      parameters,
    );
    return rows[0]?.live ?? 0;
  }
}

/** An `expires_at` the contract class has checked, which must also lie in the future. */
function futureInstant(value: string): Date {
  const expiresAt = instant(value);
  if (expiresAt.getTime() <= Date.now()) throw SuppressionsException.expiryNotInFuture();
  return expiresAt;
}
