import type { AccountStatus } from '@envoi/contracts-accounts';

/** What an account's status is derived from (spec 3.1). */
export interface StatusFacts {
  deletedAt: Date | null;
  suspendedAt: Date | null;
  /** The parent's own suspension; null for a top-level account or an unsuspended parent. */
  parentSuspendedAt: Date | null;
}

/**
 * `deleted` once soft-deleted. Otherwise the later suspension decides: a parent suspended after
 * its child was (or a child never suspended itself) makes the child `parent-suspended`; a child
 * suspended after its parent shows `suspended`. Lifting either restores what the other says.
 */
export function accountStatus(facts: StatusFacts): AccountStatus {
  if (facts.deletedAt) return 'deleted';
  const own = facts.suspendedAt?.getTime();
  const parent = facts.parentSuspendedAt?.getTime();
  if (parent !== undefined && (own === undefined || parent >= own)) return 'parent-suspended';
  if (own !== undefined) return 'suspended';
  return 'active';
}

/** accountStatus in SQL, for an account row `a` left-joined to its parent row `p`. */
export function accountStatusSql(a: string, p: string): string {
  return `CASE
    WHEN ${a}.deleted_at IS NOT NULL THEN 'deleted'
    WHEN ${p}.suspended_at IS NOT NULL
      AND (${a}.suspended_at IS NULL OR ${p}.suspended_at >= ${a}.suspended_at)
      THEN 'parent-suspended'
    WHEN ${a}.suspended_at IS NOT NULL THEN 'suspended'
    ELSE 'active' END`;
}
