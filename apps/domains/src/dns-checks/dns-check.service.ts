import { randomUUID } from 'node:crypto';

import { DomainsStreamSubjects } from '@envoi/contracts-domains';
import { enqueueEvent, OutboxRelayService } from '@envoi/shared-outbox';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { DnsVerifier, type RecordOutcome } from '../dns/dns-verifier';
import { DomainsConfig } from '../domains.config';
import {
  type DnsEndpoints,
  type ExpectedRecord,
  isDnsValid,
  isPropagated,
  type RecordChecks,
  type RecordKey,
} from '../domains/dns-records';
import type { DomainEntity } from '../domains/domain.entity';
import { effectiveSelector, recordsOf } from '../domains/domain.mapper';
import { DomainEvents } from '../domains/domain-events';
import { DNS_ENDPOINTS } from '../domains/domains.constants';
import { DomainsException } from '../domains/domains.exception';
import { DomainsRepository } from '../domains/domains.repository';

export type CheckTrigger = 'manual' | 'periodic';

interface CheckedRecord {
  record: ExpectedRecord;
  outcome: RecordOutcome;
}

/** Up to this much is added to each re-check interval, so that checks spread out. */
const RECHECK_JITTER = 0.1;

/** Folds a check's outcomes into what was known: a transient outcome keeps the last answer. */
export function mergeChecks(
  previous: RecordChecks,
  checked: readonly CheckedRecord[],
): RecordChecks {
  const merged: RecordChecks = { ...previous };
  for (const { record, outcome } of checked) {
    if (outcome.status === 'transient') continue;
    merged[record.key] = {
      host: record.host,
      content: record.content,
      propagated: outcome.status === 'pass',
    };
  }
  return merged;
}

/**
 * Runs DNS checks and records their results. The DNS lookups happen outside any transaction; the
 * result is then applied under the domain's row lock, so that concurrent checks (a manual one and
 * the periodic one, several replicas) serialise and a valid→invalid transition is seen by exactly
 * one of them, which writes the `domain.dns_error` event into the outbox in the same transaction.
 */
@Injectable()
export class DnsCheckService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: DomainsConfig,
    private readonly verifier: DnsVerifier,
    @Inject(DNS_ENDPOINTS) private readonly endpoints: DnsEndpoints,
    private readonly events: DomainEvents,
    private readonly outbox: OutboxRelayService,
    private readonly domains: DomainsRepository,
  ) {}

  /** When the next periodic check of a domain checked at `now` is due. */
  nextCheckAt(now: Date): Date {
    const interval = this.config.DNS_RECHECK_INTERVAL_MS;
    return new Date(
      now.getTime() + interval + Math.floor(Math.random() * interval * RECHECK_JITTER),
    );
  }

  /**
   * Checks the domain's records now and saves the result; null when the domain was deleted
   * meanwhile. When DNS answered nothing at all, a manual check fails with
   * `domains.dns_check_unavailable` and a periodic one is simply rescheduled.
   */
  async check(domain: DomainEntity, trigger: CheckTrigger): Promise<DomainEntity | null> {
    let checked = await this.verifyAll(domain);
    if (
      trigger === 'periodic' &&
      domain.dnsValid &&
      !isDnsValid(recordsOf(domain, this.endpoints), mergeChecks(domain.dnsChecks, checked))
    ) {
      // A valid domain is confirmed broken by a second look before it is marked so.
      checked = await this.verifyAll(domain);
    }
    if (checked.every(({ outcome }) => outcome.status === 'transient')) {
      if (trigger === 'manual') throw DomainsException.dnsCheckUnavailable();
      await this.domains.reschedule(domain.id, this.nextCheckAt(new Date()));
      return null;
    }
    return this.save(domain.id, checked);
  }

  /** Every record's outcome; a lookup unfinished at the deadline counts as unanswered. */
  private async verifyAll(domain: DomainEntity): Promise<CheckedRecord[]> {
    const records = recordsOf(domain, this.endpoints);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<RecordOutcome>((resolve) => {
      timer = setTimeout(
        () => resolve({ status: 'transient', reason: 'the check ran out of time' }),
        this.config.DNS_CHECK_DEADLINE_MS,
      );
    });
    try {
      const outcomes = await Promise.all(
        records.map((record) => Promise.race([this.verifier.verify(record), deadline])),
      );
      return records.map((record, index) => ({
        record,
        outcome: outcomes[index] ?? { status: 'transient', reason: 'not checked' },
      }));
    } finally {
      clearTimeout(timer);
    }
  }

  private async save(
    domainId: string,
    checked: readonly CheckedRecord[],
  ): Promise<DomainEntity | null> {
    const now = new Date();
    let becameInvalid = false;
    let authorizationChanged = false;
    const saved = await this.dataSource.transaction(async (manager) => {
      const domain = await this.domains.lockById(domainId, manager);
      if (!domain) return null;
      const records = recordsOf(domain, this.endpoints);
      const before = this.fingerprint(domain, records);
      const wasValid = domain.dnsValid;
      const propagated = (checks: RecordChecks, key: RecordKey): boolean =>
        records.some((record) => record.key === key && isPropagated(record, checks));

      domain.dnsChecks = mergeChecks(domain.dnsChecks, checked);
      domain.dnsValid = isDnsValid(records, domain.dnsChecks);
      domain.lastDnsCheckAt = now;
      domain.nextCheckAt = this.nextCheckAt(now);
      domain.trackingLocked ||= propagated(domain.dnsChecks, 'tracking');
      domain.returnPathLocked ||= propagated(domain.dnsChecks, 'return_path');
      domain.subscriptionLocked ||= propagated(domain.dnsChecks, 'subscription');
      domain.mediaLocked ||= propagated(domain.dnsChecks, 'media');
      domain.dkimSelectorLocked ||= propagated(domain.dnsChecks, 'dkim');
      authorizationChanged = this.fingerprint(domain, records) !== before;
      if (authorizationChanged) domain.version += 1;

      await this.domains.updateCheck(domain, authorizationChanged, manager);

      if (wasValid && !domain.dnsValid) {
        becameInvalid = true;
        await enqueueEvent(manager, DomainsStreamSubjects.dnsError, {
          id: randomUUID(),
          type: 'domain.dns_error',
          timestamp: now.toISOString(),
          data: {
            domain: domain.name,
            account_id: domain.accountId,
            spf_valid: propagated(domain.dnsChecks, 'spf'),
            dkim_valid: propagated(domain.dnsChecks, 'dkim'),
            dmarc_valid: propagated(domain.dnsChecks, 'dmarc'),
            dns_last_checked_at: now.toISOString(),
          },
        });
      }
      return this.domains.findById(domain.id, manager);
    });
    if (becameInvalid) this.outbox.notify();
    if (saved && authorizationChanged) this.events.changed(saved, 'dns_validity');
    return saved;
  }

  /** What a sender authorization depends on that a check can change. */
  private fingerprint(domain: DomainEntity, records: readonly ExpectedRecord[]): string {
    const host = (key: RecordKey): string =>
      records.find((record) => record.key === key && isPropagated(record, domain.dnsChecks))
        ?.host ?? '';
    return [domain.dnsValid, effectiveSelector(domain), host('return_path'), host('tracking')].join(
      '|',
    );
  }
}
