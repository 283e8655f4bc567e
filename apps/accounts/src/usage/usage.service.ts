import type { SubAccountsUsageRecord, UsageBucket } from '@envoi/contracts-accounts';
import { Injectable } from '@nestjs/common';

import { AccountsConfig } from '../accounts.config';
import { AccountsException } from '../accounts/accounts.exception';
import { SubAccountsException } from '../sub-accounts/sub-accounts.exception';
import { billingPeriodOf, periodKey } from './billing-period';
import { type AccountReceptions, ReceptionCountsRepository } from './reception-counts.repository';
import { allocateProportionally, amountInCents } from './usage-allocation';

export const ALLOCATION_NOTE =
  "allocated_cost is a proportional share of the parent's pooled invoice for the period (by reception count), not what the sub account would pay on its own plan.";

/** A bucket of the report: its receptions and their share of the pooled invoice. */
function bucket(receptionCount: number, cents: number): UsageBucket {
  return { reception_count: receptionCount, allocated_cost: cents / 100 };
}

/**
 * The usage report of a parent for the current billing period (spec 2.6): receptions of the
 * parent, of each of its live children and of its deleted children together, and the pooled
 * invoice amount allocated over them in proportion to those counts.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly counts: ReceptionCountsRepository,
    private readonly config: AccountsConfig,
  ) {}

  async report(accountId: string, now = new Date()): Promise<SubAccountsUsageRecord> {
    const period = billingPeriodOf(now);
    const rows = await this.counts.periodUsage(accountId, periodKey(now));
    const parent = rows.find((row) => row.accountId === accountId);
    if (!parent) throw AccountsException.notFound();
    if (parent.parentAccountId !== null) throw SubAccountsException.notAParent();
    const children = rows.filter((row) => row !== parent);
    const live = children.filter((child) => !child.deleted);
    const removedCount = sum(children.filter((child) => child.deleted));
    const total = parent.receptionCount + sum(live) + removedCount;
    const totalCents = amountInCents(this.config.BILLING_POOLED_INVOICE_AMOUNT);
    const [parentCents = 0, removedCents = 0, ...liveCents] = allocateProportionally(totalCents, [
      parent.receptionCount,
      removedCount,
      ...live.map((child) => child.receptionCount),
    ]);
    return {
      billing_period: { start: period.start.toISOString(), end: period.end.toISOString() },
      currency: this.config.BILLING_CURRENCY,
      allocation_method: 'proportional',
      allocation_note: ALLOCATION_NOTE,
      parent: { account_id: accountId, ...bucket(parent.receptionCount, parentCents) },
      sub_accounts: live.map((child, index) => ({
        account_id: child.accountId,
        name: child.name,
        ...bucket(child.receptionCount, liveCents[index] ?? 0),
      })),
      removed_sub_accounts: bucket(removedCount, removedCents),
      total: bucket(total, total === 0 ? 0 : totalCents),
    };
  }
}

function sum(rows: readonly AccountReceptions[]): number {
  return rows.reduce((total, row) => total + row.receptionCount, 0);
}
