import { MESSAGE_STATUSES, type MessageStatus } from '@envoi/contracts-messages';
import { isRFC3339, isUUID } from 'class-validator';

import {
  type BounceClassification,
  type DeliveryAttemptData,
  type DeliveryOutcomeData,
  FAILURE_REASONS,
  type FailureReason,
  RECIPIENT_RESULTS,
  type RecipientOutcomeData,
  type RecipientResult,
} from './events';

/** A delivery event's `data` as it arrives: `recipients` and `is_bot` absent in older events. */
export type OutcomePayload = Omit<DeliveryOutcomeData, 'recipients' | 'is_bot'> & {
  is_bot?: boolean;
  recipients?: RecipientOutcomeData[];
};

type Fields = Readonly<Record<string, unknown>>;

/** The `event` names of the delivery events. */
export const OUTCOME_EVENT_NAMES: ReadonlyArray<DeliveryOutcomeData['event']> = [
  'on_delivered',
  'on_transient_error',
  'on_failed',
  'on_bounced',
  'on_suppressed',
];
const BOUNCE_CLASSIFICATIONS: readonly BounceClassification[] = ['hard', 'soft'];

function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function oneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return values.some((candidate) => candidate === value);
}

function isWholeAtLeastOne(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}

function attemptOf(value: unknown): DeliveryAttemptData | undefined {
  if (!isFields(value)) return undefined;
  const { time, remote_host, reply, status, attempt } = value;
  if (typeof time !== 'string' || !isRFC3339(time)) return undefined;
  if (typeof remote_host !== 'string' || typeof reply !== 'string') return undefined;
  if (!oneOf<MessageStatus>(MESSAGE_STATUSES, status) || !isWholeAtLeastOne(attempt)) {
    return undefined;
  }
  return { time, remote_host, reply, status, attempt };
}

function recipientOf(value: unknown): RecipientOutcomeData | undefined {
  if (!isFields(value)) return undefined;
  const { email, result, remote_host, reply, bounce_classification } = value;
  if (typeof email !== 'string' || !oneOf<RecipientResult>(RECIPIENT_RESULTS, result)) {
    return undefined;
  }
  if (typeof remote_host !== 'string' || typeof reply !== 'string') return undefined;
  const recipient: RecipientOutcomeData = { email, result, remote_host, reply };
  if (bounce_classification === undefined) return recipient;
  if (!oneOf(BOUNCE_CLASSIFICATIONS, bounce_classification)) return undefined;
  return { ...recipient, bounce_classification };
}

function recipientsOf(value: unknown): RecipientOutcomeData[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const recipients: RecipientOutcomeData[] = [];
  for (const item of value) {
    const recipient = recipientOf(item);
    if (!recipient) return undefined;
    recipients.push(recipient);
  }
  return recipients;
}

/** The optional fields, each left out when absent; `false` when one is present and invalid. */
function optionalFieldsOf(
  data: Fields,
):
  | Pick<OutcomePayload, 'is_bot' | 'bounce_classification' | 'recipients' | 'failure_reason'>
  | false {
  const { is_bot, bounce_classification, recipients, failure_reason } = data;
  const optional: Pick<
    OutcomePayload,
    'is_bot' | 'bounce_classification' | 'recipients' | 'failure_reason'
  > = {};
  if (is_bot !== undefined) {
    if (typeof is_bot !== 'boolean') return false;
    optional.is_bot = is_bot;
  }
  if (bounce_classification !== undefined) {
    if (!oneOf(BOUNCE_CLASSIFICATIONS, bounce_classification)) return false;
    optional.bounce_classification = bounce_classification;
  }
  if (recipients !== undefined) {
    const checked = recipientsOf(recipients);
    if (!checked) return false;
    optional.recipients = checked;
  }
  if (failure_reason !== undefined) {
    if (!oneOf<FailureReason>(FAILURE_REASONS, failure_reason)) return false;
    optional.failure_reason = failure_reason;
  }
  return optional;
}

/**
 * A delivery event's `data` checked by hand, field by field, with the checks of the contract class
 * (the same UUID and RFC 3339 tests, stricter elsewhere: a null where a field is optional, a
 * boxed string), and only its fields kept. Undefined when any check fails: the caller then
 * validates against the class, which says why. Events as the delivery service publishes them
 * pass here, at a fraction of the class validation's cost.
 */
export function fastOutcomePayload(value: unknown): OutcomePayload | undefined {
  if (!isFields(value)) return undefined;
  const { id, account_id, event, from, recipient, subject, message_id_header, status } = value;
  if (typeof id !== 'string' || !isUUID(id)) return undefined;
  if (typeof account_id !== 'string' || !isUUID(account_id)) return undefined;
  if (!oneOf(OUTCOME_EVENT_NAMES, event) || !oneOf<MessageStatus>(MESSAGE_STATUSES, status)) {
    return undefined;
  }
  if (typeof from !== 'string' || typeof recipient !== 'string') return undefined;
  if (typeof subject !== 'string' || typeof message_id_header !== 'string') return undefined;
  if (typeof value['sandbox'] !== 'boolean') return undefined;
  const attempt = attemptOf(value['attempt']);
  const optional = optionalFieldsOf(value);
  if (!attempt || !optional) return undefined;
  return {
    id,
    account_id,
    event,
    from,
    recipient,
    subject,
    message_id_header,
    status,
    attempt,
    sandbox: value['sandbox'],
    ...optional,
  };
}
