import type { StreamSubject } from '@envoi/contracts-core';
import {
  type BounceClassification,
  type DeliveryOutcomeData,
  type DeliveryOutcomeEvent,
  DeliveryStreamSubjects,
  type FailureReason,
  type RecipientOutcomeData,
  type RecipientResult,
} from '@envoi/contracts-delivery';
import type { DeliveryView, MessageStatus, SandboxResult } from '@envoi/contracts-messages';

/** The five delivery events, by the name the attempts table keeps (a recipient's result too). */
export type OutcomeKind = RecipientResult;

/** What one attempt came to, for the message and for each recipient it dealt with. */
export interface AttemptOutcome {
  kind: OutcomeKind;
  /** The status the message moves to. */
  status: MessageStatus;
  /** The MX host that answered (empty when none did). */
  remoteHost: string;
  /** The reply or error, one line. */
  reply: string;
  bounceClassification?: BounceClassification;
  /** Every recipient the attempt dealt with (those not settled by earlier attempts). */
  recipients: RecipientOutcomeData[];
  /** Set when some recipient failed for good. */
  failureReason?: FailureReason;
}

const EVENTS: {
  readonly [Kind in OutcomeKind]: {
    type: DeliveryOutcomeEvent['type'];
    event: DeliveryOutcomeData['event'];
    subject: StreamSubject<DeliveryOutcomeEvent>;
  };
} = {
  delivered: {
    type: 'message.delivered',
    event: 'on_delivered',
    subject: DeliveryStreamSubjects.delivered,
  },
  transient_error: {
    type: 'message.transient_error',
    event: 'on_transient_error',
    subject: DeliveryStreamSubjects.transientError,
  },
  failed: { type: 'message.failed', event: 'on_failed', subject: DeliveryStreamSubjects.failed },
  bounced: {
    type: 'message.bounced',
    event: 'on_bounced',
    subject: DeliveryStreamSubjects.bounced,
  },
  suppressed: {
    type: 'message.suppressed',
    event: 'on_suppressed',
    subject: DeliveryStreamSubjects.suppressed,
  },
};

/**
 * A sandbox message's simulated outcome (platform notes 3.1), the same for every recipient: no
 * network I/O, the status the result names, and the matching event. `deliver` is the default.
 */
export function sandboxOutcome(
  result: SandboxResult | null,
  recipients: readonly string[],
): AttemptOutcome {
  switch (result ?? 'deliver') {
    case 'deliver':
      return simulated(
        recipients,
        'delivered',
        'Sandbox Delivered',
        '250 2.0.0 sandbox: delivered',
      );
    case 'bounce':
      return simulated(recipients, 'bounced', 'Sandbox Bounced', '550 5.1.1 sandbox: bounced', {
        bounceClassification: 'hard',
      });
    case 'defer':
      return simulated(
        recipients,
        'transient_error',
        'Sandbox Deferred',
        '451 4.3.0 sandbox: deferred',
      );
    case 'fail':
      return simulated(recipients, 'failed', 'Sandbox Failed', '554 5.0.0 sandbox: failed', {
        failureReason: 'retries_exhausted',
      });
    case 'suppress':
      return simulated(recipients, 'suppressed', 'Sandbox Suppressed', 'sandbox: suppressed');
  }
}

function simulated(
  recipients: readonly string[],
  kind: OutcomeKind,
  status: MessageStatus,
  reply: string,
  extra: Pick<AttemptOutcome, 'bounceClassification' | 'failureReason'> = {},
): AttemptOutcome {
  return {
    kind,
    status,
    remoteHost: '',
    reply,
    ...extra,
    recipients: recipients.map((email) => ({
      email,
      result: kind,
      remote_host: '',
      reply,
      ...(extra.bounceClassification ? { bounce_classification: extra.bounceClassification } : {}),
    })),
  };
}

/** The stream subject of an outcome's event. */
export function outcomeSubject(kind: OutcomeKind): StreamSubject<DeliveryOutcomeEvent> {
  return EVENTS[kind].subject;
}

/** The durable event announcing an attempt's outcome (webhook payload fields plus status). */
export function outcomeEvent(
  id: string,
  view: DeliveryView,
  attempt: number,
  outcome: AttemptOutcome,
  time: Date,
): DeliveryOutcomeEvent {
  const names = EVENTS[outcome.kind];
  const data: DeliveryOutcomeData = {
    account_id: view.account_id,
    event: names.event,
    from: view.sender,
    recipient: view.envelope_recipients[0] ?? '',
    subject: view.subject,
    message_id_header: view.message_id_header,
    id: view.id,
    is_bot: false,
    status: outcome.status,
    attempt: {
      time: time.toISOString(),
      remote_host: outcome.remoteHost,
      reply: outcome.reply,
      status: outcome.status,
      attempt,
    },
    ...(outcome.bounceClassification
      ? { bounce_classification: outcome.bounceClassification }
      : {}),
    sandbox: view.sandbox,
    recipients: outcome.recipients,
    ...(outcome.failureReason ? { failure_reason: outcome.failureReason } : {}),
  };
  return {
    id,
    type: names.type,
    timestamp: time.toISOString(),
    data,
  };
}

/** Statuses after which a message is never attempted again. */
const FINAL_STATUSES: ReadonlySet<MessageStatus> = new Set<MessageStatus>([
  'Delivered',
  'Bounced',
  'Failed',
  'Suppressed',
  'Cancelled',
  'Expired',
  'Sandbox Delivered',
  'Sandbox Deferred',
  'Sandbox Failed',
  'Sandbox Bounced',
  'Sandbox Suppressed',
]);

/** Received, Scheduled and Deferred messages may be attempted; any other status is final. */
export function isAttemptable(status: MessageStatus): boolean {
  return !FINAL_STATUSES.has(status);
}
