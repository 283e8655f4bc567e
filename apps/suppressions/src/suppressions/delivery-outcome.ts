import { isHostname, normalizeDomainName, printable } from '@envoi/contracts-core';
import {
  decodeDeliveryOutcomeEvent,
  type DeliveryOutcomeData,
  OUTCOME_BATCH_TYPE,
  type RecipientOutcomeData,
} from '@envoi/contracts-delivery';
import { isSuppressibleEmail, normalizeEmail, REASON_MAX } from '@envoi/contracts-suppressions';
import {
  decodeCarriedEvents,
  type DecodedEvents,
  UnprocessableMessageError,
} from '@envoi/shared-nats';

/** The automatic suppression an event asks for. */
export interface AutomaticSuppression {
  accountId: string;
  /** Normalised. */
  email: string;
  /** The sending domain (normalised): automatic suppressions apply to it only. */
  domain: string;
  reason: string;
}

export interface SuppressionDecision {
  eventId: string;
  /** One per recipient to suppress; empty: the event suppresses nothing. */
  suppressions: AutomaticSuppression[];
  /** Recipients that should be suppressed but are not email addresses (nothing to suppress). */
  unusable: string[];
}

function reasonText(prefix: string, recipient: RecipientOutcomeData): string {
  const reply = printable(recipient.reply).trim();
  const where = recipient.remote_host.trim();
  const text = reply === '' ? prefix : `${prefix}${where === '' ? '' : ` (${where})`}: ${reply}`;
  return text.length <= REASON_MAX ? text : `${text.slice(0, REASON_MAX - 1)}…`;
}

/** Why the recipient should be suppressed, or null. */
function suppressionReason(data: DeliveryOutcomeData, recipient: RecipientOutcomeData) {
  if (recipient.result === 'bounced' && recipient.bounce_classification === 'hard') {
    return reasonText('Hard bounce', recipient);
  }
  if (
    recipient.result === 'failed' &&
    data.failure_reason === 'retries_exhausted' &&
    data.attempt.attempt >= 2
  ) {
    return reasonText('Repeated delivery failures', recipient);
  }
  return null;
}

/**
 * How every JSON string that makes a recipient suppressible ends: a recipient's result `bounced`
 * or `failed`, or the type `message.bounced` or `message.failed` of an event published before
 * per-recipient outcomes (its one recipient's result comes from its type).
 */
const SUPPRESSING_ENDINGS = [Buffer.from('bounced"'), Buffer.from('failed"')];
/** A JSON escape could spell either of them without their bytes. */
const UNICODE_ESCAPE = Buffer.from('\\u');

/**
 * Whether a delivery event's raw payload can be seen, without parsing it, to suppress nothing:
 * no string in it ends in `bounced` or `failed` (see SUPPRESSING_ENDINGS), and no `\u` escape
 * could spell one. Most events (deliveries, deferrals) are such; the others are decoded and
 * decided by toSuppressionDecision.
 */
export function suppressesNothing(payload: Uint8Array): boolean {
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  return (
    bytes.indexOf(UNICODE_ESCAPE) === -1 &&
    SUPPRESSING_ENDINGS.every((ending) => bytes.indexOf(ending) === -1)
  );
}

/**
 * What a delivery event of the EVENTS stream means for the suppression list (issue 6, platform
 * notes 2.7), recipient by recipient (`recipients`: a conversation message's attempt can deliver
 * to one address, bounce another and defer a third, so any of the events can carry a bounce):
 * - a hard bounce (classification `hard`, including an asynchronous bounce after delivery)
 *   suppresses that recipient;
 * - a permanent failure after repeated attempts (failure reason `retries_exhausted`, reported by
 *   attempt 2 or later: the "repeated soft failures" of the reference) suppresses that
 *   recipient. Expiries (the sender's deadline) and messages that could not be sent at all (the
 *   content was purged, the sending domain is gone: the sender's side) do not;
 * - soft bounces, deferrals, deliveries and every sandbox outcome suppress nothing. Whether
 *   sandbox bounces create real suppressions is undocumented (platform notes 3.1); they do not
 *   here, so that testing with `sandbox_result: bounce` never blocks a real address.
 *
 * The suppression applies to the sending domain only (the domain of `from`), not the whole
 * account: the reference's `suppression.created` names a `sending_domain`, and a refusal of one
 * domain's mail (reputation, policy) says nothing about the account's other domains. It lasts
 * the automatic lifetime (30 days by default).
 *
 * Throws UnprocessableMessageError for an event no retry can help (malformed).
 */
export function toSuppressionDecision(event: unknown): SuppressionDecision {
  const decoded = decodeDeliveryOutcomeEvent(event);
  if (!decoded.ok) throw new UnprocessableMessageError(decoded.message);
  const { id, data } = decoded.event;
  const decision: SuppressionDecision = { eventId: id, suppressions: [], unusable: [] };
  if (data.sandbox || data.status.startsWith('Sandbox')) return decision;
  const wanted = data.recipients.flatMap((recipient) => {
    const reason = suppressionReason(data, recipient);
    return reason ? [{ email: recipient.email, reason }] : [];
  });
  if (wanted.length === 0) return decision;
  const domain = normalizeDomainName(data.from.slice(data.from.lastIndexOf('@') + 1));
  if (!isHostname(domain)) {
    throw new UnprocessableMessageError(`event ${id}: from has no valid domain`);
  }
  const seen = new Set<string>();
  for (const { email: given, reason } of wanted) {
    const email = normalizeEmail(given);
    if (!isSuppressibleEmail(email)) decision.unusable.push(given);
    else if (!seen.has(email)) {
      seen.add(email);
      decision.suppressions.push({ accountId: data.account_id, email, domain, reason });
    }
  }
  return decision;
}

/**
 * What the delivery events of one stream message (a `message.outcome_batch`'s, in order, or the
 * message's own) mean for the suppression list, each as toSuppressionDecision says. A batch's
 * events are of unrelated messages: one no retry can help is left out (with why).
 */
export function toSuppressionDecisions(message: unknown): DecodedEvents<SuppressionDecision> {
  return decodeCarriedEvents(message, [OUTCOME_BATCH_TYPE], toSuppressionDecision);
}
