import { randomUUID } from 'node:crypto';

import type { MessageResponse, Page, PageRequest } from '@envoi/contracts-core';
import { normalizeDomainName } from '@envoi/contracts-core';
import {
  type AutomaticSuppressionResult,
  type CheckSuppressionsResult,
  type CreateAutomaticSuppressionRequest,
  type CreateSuppressionBody,
  normalizeEmail,
  SNAPSHOT_REPLY_MAX_BYTES,
  type SuppressionFilters,
  type SuppressionRecord,
  type SuppressionSnapshotResult,
  SuppressionsStreamSubjects,
} from '@envoi/contracts-suppressions';
import { isUniqueViolation } from '@envoi/shared-database';
import { enqueueEvent, OutboxRelayService } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { SuppressionsConfig } from '../suppressions.config';
import { AccountDomains } from './account-domains.service';
import { DOMAIN_KEY, GLOBAL_KEY, type SuppressionEntity } from './suppression.entity';
import {
  deletedMessage,
  toCheckResult,
  toCreatedEventData,
  toSuppressionRecord,
} from './suppression.mapper';
import { SuppressionChangeEvents } from './suppression-change-events';
import {
  instant,
  listCriteria,
  optionalDomain,
  requireDomain,
  requireEmail,
} from './suppression-inputs';
import { SuppressionsException } from './suppressions.exception';
import { type NewSuppression, SuppressionsRepository } from './suppressions.repository';

@Injectable()
export class SuppressionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: SuppressionsConfig,
    private readonly outbox: OutboxRelayService,
    private readonly domains: AccountDomains,
    private readonly suppressions: SuppressionsRepository,
    private readonly changes: SuppressionChangeEvents,
  ) {}

  /** Unexpired suppressions, newest first; `suppressions.domain_not_found` for a domain not owned. */
  async list(
    accountId: string,
    filters: SuppressionFilters | undefined,
    page: PageRequest,
  ): Promise<Page<SuppressionRecord>> {
    const criteria = listCriteria(filters);
    if (criteria.domain !== undefined) await this.domains.requireOwned(accountId, criteria.domain);
    const result = await this.suppressions.page(accountId, criteria, page);
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
      const existing = await this.suppressions.findCovering(fields);
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
    const deleted = await this.suppressions.deleteForEmail(accountId, email, domain);
    await this.changes.changed([accountId]);
    if (deleted === 0) throw SuppressionsException.notFound();
    return { message: deletedMessage(deleted) };
  }

  /** Deletes every suppression of the account, or those of `domain` only (a domain it owns). */
  async wipe(accountId: string, rawDomain: string | undefined): Promise<MessageResponse> {
    const domain = rawDomain === undefined ? undefined : requireDomain(rawDomain);
    if (domain !== undefined) await this.domains.requireOwned(accountId, domain);
    const deleted = await this.suppressions.deleteForAccount(accountId, domain);
    await this.changes.changed([accountId]);
    return { message: deletedMessage(deleted) };
  }

  /**
   * The account's unexpired suppressions for a sender's cache; null when it has more than `max` or
   * they would not fit SNAPSHOT_REPLY_MAX_BYTES.
   */
  async snapshot(accountId: string, max: number): Promise<SuppressionSnapshotResult> {
    const rows = await this.suppressions.snapshot(accountId, max);
    const snapshot: SuppressionSnapshotResult = {
      suppressions:
        rows?.map((row) => ({
          email: row.email,
          domain: row.domain,
          reason: row.reason ?? '',
          expires_at: row.expiresAt.toISOString(),
        })) ?? null,
    };
    const fits = Buffer.byteLength(JSON.stringify(snapshot), 'utf8') <= SNAPSHOT_REPLY_MAX_BYTES;
    return fits ? snapshot : { suppressions: null };
  }

  /** Which of the addresses may not be sent to from the sender domain (one query). */
  async check(
    accountId: string,
    senderDomain: string,
    emails: readonly string[],
  ): Promise<CheckSuppressionsResult> {
    const normalized = [...new Set(emails.map(normalizeEmail))];
    const reasons = await this.suppressions.reasonsFor(
      accountId,
      normalized,
      normalizeDomainName(senderDomain),
    );
    return toCheckResult(emails, reasons);
  }

  /**
   * Inserts the suppression and its `suppression.created` event in one transaction; null when an
   * unexpired suppression has the same account, address and domain.
   */
  private async insert(fields: NewSuppression): Promise<SuppressionEntity | null> {
    let suppression: SuppressionEntity;
    try {
      suppression = await this.dataSource.transaction(async (manager) => {
        const inserted = await this.suppressions.insert(fields, manager);
        await enqueueEvent(manager, SuppressionsStreamSubjects.created, {
          id: randomUUID(),
          type: 'suppression.created',
          timestamp: inserted.createdAt.toISOString(),
          data: toCreatedEventData(inserted),
        });
        return inserted;
      });
    } catch (error) {
      if (isUniqueViolation(error, GLOBAL_KEY) || isUniqueViolation(error, DOMAIN_KEY)) return null;
      throw error;
    }
    this.outbox.notify();
    await this.changes.changed([suppression.accountId]);
    return suppression;
  }
}

/** An `expires_at` the contract class has checked, which must also lie in the future. */
function futureInstant(value: string): Date {
  const expiresAt = instant(value);
  if (expiresAt.getTime() <= Date.now()) throw SuppressionsException.expiryNotInFuture();
  return expiresAt;
}
