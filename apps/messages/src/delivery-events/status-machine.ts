import {
  type DeliveryAttemptRecord,
  isFinalMessageStatus,
  type MessageStatus,
} from '@envoi/contracts-messages';

/**
 * How far a message has come. An event may only move a message up this order: events arrive in
 * any order (one durable consumer per event subject, redeliveries), and at least once.
 *
 *   0  Received, Scheduled        accepted, nothing attempted yet
 *   1  Deferred                   attempted, will be retried
 *   2  Delivered                  the remote MX accepted it; an asynchronous bounce may follow
 *   3  every other status         final: Bounced, Failed, Suppressed, Expired, Cancelled and the
 *                                 five sandbox statuses (a sandbox outcome is simulated once)
 *
 * Within rank 3 nothing moves, and from Delivered only Bounced is reachable (platform notes 2.4:
 * "A Bounced can also follow Delivered").
 */
const RANK: { readonly [Status in MessageStatus]: number } = {
  Received: 0,
  Scheduled: 0,
  Deferred: 1,
  Delivered: 2,
  Bounced: 3,
  Failed: 3,
  Suppressed: 3,
  Cancelled: 3,
  Expired: 3,
  'Sandbox Delivered': 3,
  'Sandbox Deferred': 3,
  'Sandbox Failed': 3,
  'Sandbox Bounced': 3,
  'Sandbox Suppressed': 3,
};

/** The status a message in `current` has once an event reporting `reported` is applied. */
export function nextStatus(current: MessageStatus, reported: MessageStatus): MessageStatus {
  if (current === 'Delivered') return reported === 'Bounced' ? 'Bounced' : current;
  return RANK[reported] > RANK[current] ? reported : current;
}

/** Statuses that are reported without anything having been sent: no attempt is counted. */
const NOT_ATTEMPTED: ReadonlySet<MessageStatus> = new Set<MessageStatus>([
  'Suppressed',
  'Sandbox Suppressed',
  'Expired',
]);

/** Entries of `delivery_attempts` kept at most (the newest); `num_attempts` counts them all. */
export const MAX_LOGGED_ATTEMPTS = 100;

/** The delivery fields of a message. */
export interface DeliveryState {
  status: MessageStatus;
  sentAt: Date | null;
  deliveredAt: Date | null;
  bounceClassification: string | null;
  numAttempts: number;
  deliveryAttempts: DeliveryAttemptRecord[];
}

/** What one delivery event reports. */
export interface ReportedOutcome {
  /** The status the message moves to (if the order allows). */
  status: MessageStatus;
  attempt: {
    time: Date;
    /** Empty for sandbox outcomes and failures before any connection. */
    remoteHost: string;
    reply: string;
    status: MessageStatus;
  };
  bounceClassification: string | null;
}

function isDelivered(status: MessageStatus): boolean {
  return status === 'Delivered' || status === 'Sandbox Delivered';
}

function isBounced(status: MessageStatus): boolean {
  return status === 'Bounced' || status === 'Sandbox Bounced';
}

function earliest(current: Date | null, candidate: Date): Date {
  return current === null || candidate.getTime() < current.getTime() ? candidate : current;
}

/** The `delivery_attempts` line: where it went and what came back. */
export function attemptLog(remoteHost: string, reply: string, status: MessageStatus): string {
  const text = reply.trim() === '' ? status : reply.trim();
  return remoteHost === '' ? text : `${remoteHost}: ${text}`;
}

/**
 * Applies one (new, never before applied) event to a message's delivery fields:
 * - the status moves only forward (nextStatus);
 * - the event is logged in `delivery_attempts`, ordered by time whatever the arrival order;
 * - a real attempt (not a suppression or an expiry, which send nothing) counts in `num_attempts`
 *   and sets `sent_at` to the earliest attempt;
 * - `delivered_at` is the time of the delivery, kept when an asynchronous bounce follows;
 * - `bounce_classification` comes from the bounce that made the message Bounced.
 */
export function applyOutcome(state: DeliveryState, outcome: ReportedOutcome): DeliveryState {
  const status = nextStatus(state.status, outcome.status);
  const { attempt } = outcome;
  const attempted = !NOT_ATTEMPTED.has(outcome.status);
  const delivered =
    isDelivered(outcome.status) && (isDelivered(status) || status === 'Bounced')
      ? earliest(state.deliveredAt, attempt.time)
      : state.deliveredAt;
  const bounceClassification =
    isBounced(outcome.status) && status === outcome.status && state.bounceClassification === null
      ? outcome.bounceClassification
      : state.bounceClassification;
  const entry: DeliveryAttemptRecord = {
    time: attempt.time.toISOString(),
    log: attemptLog(attempt.remoteHost, attempt.reply, attempt.status),
    status: attempt.status,
  };
  const attempts = [...state.deliveryAttempts, entry]
    .map((record, index) => ({ record, index, at: Date.parse(record.time) }))
    .sort((a, b) => a.at - b.at || a.index - b.index)
    .map(({ record }) => record)
    .slice(-MAX_LOGGED_ATTEMPTS);
  return {
    status,
    sentAt: attempted ? earliest(state.sentAt, attempt.time) : state.sentAt,
    deliveredAt: delivered,
    bounceClassification,
    numAttempts: state.numAttempts + (attempted ? 1 : 0),
    deliveryAttempts: attempts,
  };
}

/** Whether a data retention of 0 purges the content now: delivery is over. */
export function deliveryFinished(status: MessageStatus): boolean {
  return isFinalMessageStatus(status);
}
