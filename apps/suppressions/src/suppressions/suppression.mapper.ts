import type {
  CheckSuppressionsResult,
  SuppressionCreatedData,
  SuppressionRecord,
} from '@envoi/contracts-suppressions';
import { normalizeEmail } from '@envoi/contracts-suppressions';

import type { SuppressionEntity } from './suppression.entity';

/** The public record: never the keyset position nor the source. */
export function toSuppressionRecord(suppression: SuppressionEntity): SuppressionRecord {
  return {
    object: 'suppression',
    id: suppression.id,
    created_at: suppression.createdAt.toISOString(),
    email: suppression.email,
    domain: suppression.domain,
    reason: suppression.reason,
    expires_at: suppression.expiresAt.toISOString(),
  };
}

/** `data` of the `suppression.created` webhook. */
export function toCreatedEventData(suppression: SuppressionEntity): SuppressionCreatedData {
  return {
    account_id: suppression.accountId,
    recipient: suppression.email,
    created_at: suppression.createdAt.toISOString(),
    expires_at: suppression.expiresAt.toISOString(),
    reason: suppression.reason ?? '',
    sending_domain: suppression.domain ?? '',
  };
}

/**
 * The check's answer: each distinct requested address (as given) whose normalised form is
 * suppressed, in request order, with the reason found for it.
 */
export function toCheckResult(
  requested: readonly string[],
  reasons: ReadonlyMap<string, string | null>,
): CheckSuppressionsResult {
  const suppressed: CheckSuppressionsResult['suppressed'] = [];
  const seen = new Set<string>();
  for (const email of requested) {
    if (seen.has(email)) continue;
    seen.add(email);
    const normalized = normalizeEmail(email);
    if (!reasons.has(normalized)) continue;
    suppressed.push({ email, reason: reasons.get(normalized) ?? '' });
  }
  return { suppressed };
}

/** `1 suppression deleted`, `3 suppressions deleted`. */
export function deletedMessage(count: number): string {
  return `${count} ${count === 1 ? 'suppression' : 'suppressions'} deleted`;
}
