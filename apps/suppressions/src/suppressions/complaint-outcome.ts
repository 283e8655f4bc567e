import { isHostname, normalizeDomainName } from '@envoi/contracts-core';
import { decodeComplaintEvent } from '@envoi/contracts-delivery';
import { isSuppressibleEmail, normalizeEmail } from '@envoi/contracts-suppressions';
import { UnprocessableMessageError } from '@envoi/shared-nats';

import type { SuppressionDecision } from './delivery-outcome';

/** The reason of a suppression a recipient's complaint created. */
export const COMPLAINT_REASON = 'complaint';

/**
 * What a complaint (an ARF report the delivery service matched to a message) means for the
 * suppression list: the complaining recipient is suppressed for the message's sending domain,
 * as a hard bounce is, with the reason `complaint`.
 *
 * Throws UnprocessableMessageError for an event no retry can help (malformed).
 */
export function toComplaintDecision(event: unknown): SuppressionDecision {
  const decoded = decodeComplaintEvent(event);
  if (!decoded.ok) throw new UnprocessableMessageError(decoded.message);
  const { id, data } = decoded.event;
  const domain = normalizeDomainName(data.from.slice(data.from.lastIndexOf('@') + 1));
  if (!isHostname(domain)) {
    throw new UnprocessableMessageError(`event ${id}: from has no valid domain`);
  }
  const email = normalizeEmail(data.recipient);
  if (!isSuppressibleEmail(email)) {
    return { eventId: id, suppressions: [], unusable: [data.recipient] };
  }
  return {
    eventId: id,
    suppressions: [{ accountId: data.account_id, email, domain, reason: COMPLAINT_REASON }],
    unusable: [],
  };
}
