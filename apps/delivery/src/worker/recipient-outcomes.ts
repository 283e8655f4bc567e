import { printable } from '@envoi/contracts-core';
import type { FailureReason, RecipientOutcomeData } from '@envoi/contracts-delivery';

import type { Route } from '../smtp/mx-resolver';
import {
  classifyBounce,
  formatSmtpReply,
  parseSmtpReply,
  type SmtpReply,
} from '../smtp/smtp-reply';
import type { SendResult } from '../smtp/smtp-sender';
import type { AttemptOutcome } from './outcomes';

/** The same result, host and reply for each of the recipients. */
export function sameOutcome(
  recipients: readonly string[],
  outcome: Omit<RecipientOutcomeData, 'email'>,
): RecipientOutcomeData[] {
  return recipients.map((email) => ({ email, ...outcome }));
}

/** A 5xx bounces (classified), anything else (a 4xx, no reply at all) is transient. */
function byReply(
  email: string,
  host: string,
  reply: SmtpReply | null,
  text: string,
): RecipientOutcomeData {
  if (reply && reply.code >= 500) {
    return {
      email,
      result: 'bounced',
      remote_host: host,
      reply: formatSmtpReply(reply),
      bounce_classification: classifyBounce(reply),
    };
  }
  return { email, result: 'transient_error', remote_host: host, reply: text };
}

/** What a recipient domain's route failure means for its recipients (no MX, a DNS error). */
export function routeFailureOutcomes(
  recipients: readonly string[],
  route: Exclude<Route, { kind: 'hosts' }>,
): RecipientOutcomeData[] {
  const reply = route.kind === 'permanent' ? parseSmtpReply(route.reply) : null;
  return recipients.map((email) => byReply(email, '', reply, route.reply));
}

/**
 * What one SMTP transaction to a recipient domain means for each of its recipients: delivered
 * unless refused at RCPT (each refusal by its own reply), or the transaction's failure for all.
 */
export function sendOutcomes(
  recipients: readonly string[],
  result: Exclude<SendResult, { kind: 'aborted' }>,
): RecipientOutcomeData[] {
  switch (result.kind) {
    case 'accepted':
    case 'refused': {
      const refusals = new Map(result.refused.map((refusal) => [refusal.recipient, refusal]));
      return recipients.map((email) => {
        const refusal = refusals.get(email);
        if (refusal) return byReply(email, result.host, refusal.reply, refusal.text);
        return result.kind === 'accepted'
          ? { email, result: 'delivered', remote_host: result.host, reply: result.reply }
          : // Every recipient was refused, yet nodemailer named no refusal for this one.
            { email, result: 'transient_error', remote_host: result.host, reply: 'refused' };
      });
    }
    case 'permanent':
      return recipients.map((email) => byReply(email, result.host, result.reply, ''));
    case 'transient':
      return sameOutcome(recipients, {
        result: 'transient_error',
        remote_host: result.host,
        reply: result.reply,
      });
  }
}

/** How the message's status follows from its recipients' outcomes. */
export interface SummaryContext {
  /** Some recipient accepted the message in an earlier attempt. */
  deliveredEarlier: boolean;
  /** Why recipients whose result is `failed` failed (they all failed for one reason). */
  failureReason?: FailureReason;
  /** The status failures give the message: Failed, or Expired when it was never attempted. */
  failedStatus?: 'Failed' | 'Expired';
}

/**
 * The message's outcome from its recipients' outcomes in this attempt: Deferred while any
 * recipient is to be retried; then Delivered once any recipient ever accepted it; otherwise
 * Bounced (by the first bounce) or Failed. The reply shows each recipient's reply, grouped.
 */
export function summarize(
  recipients: RecipientOutcomeData[],
  context: SummaryContext,
): AttemptOutcome {
  const first = (result: RecipientOutcomeData['result']) =>
    recipients.find((recipient) => recipient.result === result);
  const deferred = first('transient_error');
  const delivered = first('delivered');
  const bounced = first('bounced');
  const failed = first('failed');
  const reply = describe(recipients);
  const failure = failed && context.failureReason ? { failureReason: context.failureReason } : {};
  if (deferred) {
    return {
      kind: 'transient_error',
      status: 'Deferred',
      remoteHost: deferred.remote_host,
      reply,
      recipients,
      ...failure,
    };
  }
  if (delivered || context.deliveredEarlier) {
    return {
      kind: 'delivered',
      status: 'Delivered',
      remoteHost: delivered?.remote_host ?? '',
      reply: reply || 'delivered earlier',
      recipients,
      ...failure,
    };
  }
  if (bounced) {
    return {
      kind: 'bounced',
      status: 'Bounced',
      remoteHost: bounced.remote_host,
      reply,
      bounceClassification: bounced.bounce_classification ?? 'soft',
      recipients,
      ...failure,
    };
  }
  return {
    kind: 'failed',
    status: context.failedStatus ?? 'Failed',
    remoteHost: failed?.remote_host ?? '',
    reply: reply || 'no recipient left to send to',
    recipients,
    failureReason: context.failureReason ?? 'not_sendable',
  };
}

/**
 * Recipients still to be retried, given up: they fail for good with the reason appended, and
 * the message's outcome follows from them and the others.
 */
export function giveUp(
  outcome: AttemptOutcome,
  reason: string,
  deliveredEarlier: boolean,
): AttemptOutcome {
  const recipients = outcome.recipients.map((recipient) =>
    recipient.result === 'transient_error'
      ? {
          ...recipient,
          result: 'failed' as const,
          reply: `${recipient.reply}; giving up: ${reason}`,
        }
      : recipient,
  );
  return summarize(recipients, { deliveredEarlier, failureReason: 'retries_exhausted' });
}

/**
 * One line for the attempt log: the reply itself when every recipient got the same, otherwise
 * `a@x, b@x: 250 …; c@y: 550 5.1.1 …` in the order the recipients came.
 */
function describe(recipients: readonly RecipientOutcomeData[]): string {
  const groups = new Map<string, { emails: string[]; reply: string }>();
  for (const recipient of recipients) {
    const key = `${recipient.result}\n${recipient.reply}`;
    const group = groups.get(key);
    if (group) group.emails.push(recipient.email);
    else groups.set(key, { emails: [recipient.email], reply: recipient.reply });
  }
  const parts = [...groups.values()];
  if (parts.length === 1) return parts[0]?.reply ?? '';
  return parts.map((group) => `${group.emails.join(', ')}: ${group.reply}`).join('; ');
}

/**
 * The outcome with every text that came from the network (replies, host names) made printable,
 * before it is stored and published: a reply with a NUL would otherwise fail the write, and
 * the attempt would run again after its data went out.
 */
export function printableOutcome(outcome: AttemptOutcome): AttemptOutcome {
  return {
    ...outcome,
    remoteHost: printable(outcome.remoteHost),
    reply: printable(outcome.reply),
    recipients: outcome.recipients.map((recipient) => ({
      ...recipient,
      remote_host: printable(recipient.remote_host),
      reply: printable(recipient.reply),
    })),
  };
}
