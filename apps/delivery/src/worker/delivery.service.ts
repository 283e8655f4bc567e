import { randomUUID } from 'node:crypto';
import { domainToASCII } from 'node:url';

import { CodedError } from '@envoi/contracts-core';
import {
  type DeliveryJob,
  type DeliveryView,
  MessagesErrorCode,
  MessagesStreamSubjects,
  MessagesSubjects,
} from '@envoi/contracts-messages';
import { NATS_CONNECTION, RpcClient, takeUpload } from '@envoi/shared-nats';
import { type OutboxEntry, outboxEntry, OutboxRelayService } from '@envoi/shared-outbox';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

import { type AttemptClaim, AttemptLog, type OutcomeRecord } from '../attempts/attempt-log';
import type { DeliveryAttemptEntity } from '../attempts/delivery-attempt.entity';
import { DeliveryConfig } from '../delivery.config';
import { nextRetry, type RetryPolicy } from '../retry/retry-schedule';
import { SenderDomainGoneError, SenderKeys } from '../senders/sender-keys.service';
import type { MxResolver } from '../smtp/mx-resolver';
import { classifyBounce, formatSmtpReply, parseSmtpReply } from '../smtp/smtp-reply';
import type { SendResult, SmtpSender } from '../smtp/smtp-sender';
import { bounceAddress } from '../smtp/verp';
import {
  type AttemptOutcome,
  isAttemptable,
  outcomeEvent,
  outcomeSubject,
  sandboxOutcome,
} from './outcomes';

export const MX_RESOLVER = Symbol('MX_RESOLVER');
export const SMTP_SENDER = Symbol('SMTP_SENDER');

/** How a job leaves the worker: acknowledged (done), handed back after a delay, or dropped. */
export type Settlement =
  | { kind: 'ack'; note: string }
  | { kind: 'nak'; delayMs: number; note: string }
  | { kind: 'term'; note: string };

/** Longest a job waits for a scheduled first attempt before it is looked at again. */
const MAX_SCHEDULE_WAIT_MS = 3_600_000;
/** Tries to record an outcome after the message went out, before leaving it to the lease. */
const RECORD_TRIES = 3;

const ack = (note: string): Settlement => ({ kind: 'ack', note });

/**
 * One delivery job: reads the message, decides without network I/O when it can (a duplicate
 * job, a final status, not yet due, expired, sandbox), otherwise claims the attempt, sends over
 * SMTP and records the outcome, its event and any retry job in one transaction.
 */
@Injectable()
export class DeliveryService {
  private readonly logger = new Logger(DeliveryService.name);
  private readonly attempts: AttemptLog;
  private readonly retryPolicy: RetryPolicy;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: DeliveryConfig,
    private readonly senderKeys: SenderKeys,
    @Inject(MX_RESOLVER) private readonly router: MxResolver,
    @Inject(SMTP_SENDER) private readonly sender: SmtpSender,
    private readonly outbox: OutboxRelayService,
  ) {
    this.attempts = new AttemptLog(dataSource);
    this.retryPolicy = {
      scheduleMs: config.retryScheduleMs(),
      jitterRatio: config.retryJitterRatio(),
      maxAgeMs: config.maxMessageAgeMs(),
    };
  }

  /** Handles one job; throws for a failure worth retrying soon (the bus, the database). */
  async process(job: DeliveryJob, signal: AbortSignal): Promise<Settlement> {
    const existing = await this.attempts.find(job.message_id, job.attempt);
    const now = new Date();
    if (existing?.state === 'done') return ack('attempt already recorded (duplicate job)');
    if (existing && existing.leaseUntil && existing.leaseUntil > now) {
      // Another worker holds the attempt (or held it and died): look again once its lease ends,
      // or sooner (every ack wait): a duplicate of a job whose attempt finishes in a moment is
      // then settled at once rather than held for the whole lease.
      const delayMs = Math.min(
        existing.leaseUntil.getTime() - now.getTime() + 1_000,
        this.config.DELIVERY_ACK_WAIT_MS,
      );
      return { kind: 'nak', delayMs, note: 'attempt in progress elsewhere' };
    }
    const view = await this.view(job.message_id);
    if (!view) return ack('message not found');
    if (view.account_id !== job.account_id) return { kind: 'term', note: 'account mismatch' };
    if (existing) return this.takeOver(existing, view);
    if (!isAttemptable(view.status)) return ack(`message is ${view.status}`);

    const firstAttemptAt = view.first_attempt_at ? new Date(view.first_attempt_at) : null;
    if (job.attempt === 1 && firstAttemptAt && firstAttemptAt > now) {
      const delayMs = Math.min(firstAttemptAt.getTime() - now.getTime(), MAX_SCHEDULE_WAIT_MS);
      return { kind: 'nak', delayMs, note: 'not due yet' };
    }
    const expiresAt = view.expires_at ? new Date(view.expires_at) : null;
    if (expiresAt && now > expiresAt) {
      // Never attempted: dropped as Expired; after attempts: the retries ran out of time.
      const outcome: AttemptOutcome =
        job.attempt === 1
          ? { kind: 'failed', status: 'Expired', remoteHost: '', reply: 'expired before delivery' }
          : {
              kind: 'failed',
              status: 'Failed',
              remoteHost: '',
              reply: 'expired before the next attempt',
            };
      return this.recordWithoutSending(job, view, outcome, now);
    }
    if (view.sandbox) {
      return this.recordWithoutSending(job, view, sandboxOutcome(view.sandbox_result), now);
    }
    if (!view.content_base64 && !view.content_download) {
      const outcome: AttemptOutcome = {
        kind: 'failed',
        status: 'Failed',
        remoteHost: '',
        reply: 'the message content was purged before delivery',
      };
      return this.recordWithoutSending(job, view, outcome, now);
    }

    const claim = await this.attempts.claim(
      job.message_id,
      job.account_id,
      job.attempt,
      new Date(now.getTime() + this.config.attemptLeaseMs()),
      now,
    );
    if (!claim) return { kind: 'nak', delayMs: 1_000, note: 'claimed by another worker' };
    return this.attempt(job, view, claim, signal);
  }

  private async attempt(
    job: DeliveryJob,
    view: DeliveryView,
    claim: AttemptClaim,
    signal: AbortSignal,
  ): Promise<Settlement> {
    let result: SessionResult;
    try {
      result = await this.send(job, view, signal);
    } catch (error) {
      // Nothing went out: give the attempt back so that the retried job can run it.
      await this.attempts.release(claim).catch(() => undefined);
      if (error instanceof SenderDomainGoneError) {
        return this.recordWithoutSending(
          job,
          view,
          { kind: 'failed', status: 'Failed', remoteHost: '', reply: error.message },
          new Date(),
        );
      }
      throw error;
    }
    if (result === ABORTED_BEFORE_DATA || result === ABORTED_AFTER_DATA) {
      if (result === ABORTED_AFTER_DATA) {
        this.logger.warn(
          `${view.id}: attempt ${job.attempt} stopped after its data was sent; it runs again and the recipient may get it twice (RFC 1047)`,
        );
      }
      await this.attempts.release(claim);
      return { kind: 'nak', delayMs: 0, note: 'handed back (stopping)' };
    }
    const now = new Date();
    const record = await this.withFollowUps(job, view, result.outcome, now, {
      tls: result.tls,
      deliveredTo: result.deliveredTo,
    });
    for (let tryNumber = 1; ; tryNumber++) {
      try {
        if (!(await this.attempts.finish(claim, record))) {
          return ack('claim lost to a takeover; its outcome is recorded there');
        }
        break;
      } catch (error) {
        if (tryNumber >= RECORD_TRIES) throw error;
        await new Promise((resolve) => setTimeout(resolve, 500 * tryNumber));
      }
    }
    this.outbox.notify();
    return ack(`${record.outcome.status}: ${record.outcome.reply}`);
  }

  /**
   * One attempt, bounded by SMTP_ATTEMPT_TIMEOUT_MS. The deadline is a controller kept alive by
   * its own timer: an AbortSignal.timeout() referred to only by AbortSignal.any() can be garbage
   * collected before it fires (Node 20), leaving the attempt without a deadline.
   */
  private async send(
    job: DeliveryJob,
    view: DeliveryView,
    signal: AbortSignal,
  ): Promise<SessionResult> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.config.SMTP_ATTEMPT_TIMEOUT_MS);
    try {
      return await this.sendBefore(job, view, signal, AbortSignal.any([signal, timeout.signal]));
    } finally {
      clearTimeout(timer);
    }
  }

  /** Routes and sends to every recipient domain not delivered yet; one outcome for the attempt. */
  private async sendBefore(
    job: DeliveryJob,
    view: DeliveryView,
    signal: AbortSignal,
    deadline: AbortSignal,
  ): Promise<SessionResult> {
    const done = job.attempt > 1 ? await this.attempts.deliveredBefore(view.id, job.attempt) : null;
    const pending = view.envelope_recipients.filter((recipient) => !done?.has(recipient));
    const raw = view.content_base64
      ? Buffer.from(view.content_base64, 'base64')
      : view.content_download
        ? await takeUpload(this.connection, view.content_download)
        : null;
    if (!raw) throw new Error(`${view.id}: the view carries no content`);
    const key = await this.senderKeys.keyOf(view.account_id, view.domain);
    const from = bounceAddress(view.id, key.returnPathHost, this.config.RETURN_PATH_TARGET);

    const accepted: string[] = [];
    const results: Array<{ recipients: string[]; result: SendResult }> = [];
    for (const [domain, recipients] of byDomain(pending)) {
      const route = await this.router.route(domain);
      if (route.kind !== 'hosts') {
        const reply = parseSmtpReply(route.reply);
        results.push({
          recipients,
          result:
            route.kind === 'permanent' && reply
              ? { kind: 'permanent', host: '', reply }
              : { kind: 'transient', host: '', reply: route.reply },
        });
        continue;
      }
      const result = await this.sender.send(
        route.hosts,
        {
          envelope: { from, to: recipients },
          raw,
          dkim: { domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey },
        },
        deadline,
      );
      if (result.kind === 'aborted') {
        if (signal.aborted) return result.dataSent ? ABORTED_AFTER_DATA : ABORTED_BEFORE_DATA;
        // The attempt's own deadline: a transient failure like any timeout.
        results.push({
          recipients,
          result: {
            kind: 'transient',
            host: result.host,
            reply: `attempt timed out after ${this.config.SMTP_ATTEMPT_TIMEOUT_MS} ms`,
          },
        });
        continue;
      }
      if (result.kind === 'accepted') {
        accepted.push(...recipients.filter((recipient) => !result.rejected.includes(recipient)));
      }
      results.push({ recipients, result });
    }
    return {
      outcome: combine(results, (done?.size ?? 0) + accepted.length > 0),
      tls: results.some((entry) => entry.result.kind === 'accepted')
        ? results.every((entry) => entry.result.kind !== 'accepted' || entry.result.secure)
        : null,
      deliveredTo: accepted,
    };
  }

  /**
   * A job came back for an attempt whose worker vanished mid-attempt (its lease ran out). The
   * message may or may not have reached the server (RFC 1047): the attempt is recorded as a
   * transient failure and the next one follows the retry schedule, so the message is never
   * lost, at the price of a possible duplicate in that one window.
   */
  private async takeOver(row: DeliveryAttemptEntity, view: DeliveryView): Promise<Settlement> {
    const now = new Date();
    const outcome: AttemptOutcome = {
      kind: 'transient_error',
      status: 'Deferred',
      remoteHost: row.remoteHost,
      reply:
        'the worker running this attempt stopped before recording its outcome; the message may have been received (RFC 1047)',
    };
    const record = await this.withFollowUps(
      { message_id: row.messageId, account_id: row.accountId, attempt: row.attempt },
      view,
      outcome,
      now,
      { tls: null, deliveredTo: [] },
    );
    if (!(await this.attempts.takeOver(row, now, record))) {
      return { kind: 'nak', delayMs: 1_000, note: 'attempt changed meanwhile' };
    }
    this.outbox.notify();
    return ack('abandoned attempt taken over');
  }

  private async recordWithoutSending(
    job: DeliveryJob,
    view: DeliveryView,
    outcome: AttemptOutcome,
    now: Date,
  ): Promise<Settlement> {
    const record = await this.withFollowUps(job, view, outcome, now, {
      tls: null,
      deliveredTo: [],
    });
    const written = await this.attempts.recordWithoutSending(
      job.message_id,
      job.account_id,
      job.attempt,
      view.sandbox,
      record,
    );
    if (!written) return ack('attempt already recorded (duplicate job)');
    this.outbox.notify();
    return ack(`${outcome.status}: ${outcome.reply}`);
  }

  /**
   * The outcome as recorded: a transient failure of a real attempt becomes a retry at the next
   * scheduled time (or, when none is left, the final failure), with its event and job.
   */
  private async withFollowUps(
    job: DeliveryJob,
    view: DeliveryView,
    outcome: AttemptOutcome,
    now: Date,
    session: { tls: boolean | null; deliveredTo: string[] },
  ): Promise<OutcomeRecord> {
    let final = outcome;
    let nextAttemptAt: Date | null = null;
    const entries: OutboxEntry[] = [];
    if (outcome.kind === 'transient_error' && !view.sandbox) {
      const firstAttemptAt = (await this.attempts.firstAttemptStart(view.id)) ?? now;
      const decision = nextRetry(this.retryPolicy, {
        attempt: job.attempt,
        now,
        firstAttemptAt,
        expiresAt: view.expires_at ? new Date(view.expires_at) : null,
      });
      if (decision.kind === 'retry') {
        nextAttemptAt = decision.at;
        entries.push(
          outboxEntry(
            MessagesStreamSubjects.deliveryJobs,
            randomUUID(),
            { message_id: view.id, account_id: view.account_id, attempt: job.attempt + 1 },
            decision.at,
          ),
        );
      } else {
        final = {
          ...outcome,
          kind: 'failed',
          status: 'Failed',
          reply: `${outcome.reply}; giving up: ${decision.reason}`,
        };
      }
    }
    const eventId = randomUUID();
    entries.unshift(
      outboxEntry(
        outcomeSubject(final.kind),
        eventId,
        outcomeEvent(eventId, view, job.attempt, final, now),
      ),
    );
    return {
      outcome: final,
      finishedAt: now,
      tls: session.tls,
      nextAttemptAt,
      deliveredTo: session.deliveredTo,
      entries,
    };
  }

  /** The message, or null when it no longer exists. */
  private async view(messageId: string): Promise<DeliveryView | null> {
    try {
      return await this.rpc.request(
        MessagesSubjects.deliveryView,
        { message_id: messageId },
        { timeoutMs: this.config.RPC_TIMEOUT_MS },
      );
    } catch (error) {
      if (error instanceof CodedError && error.hasCode(MessagesErrorCode.MessageNotFound)) {
        return null;
      }
      throw error;
    }
  }
}

const ABORTED_BEFORE_DATA = Symbol('aborted before data');
const ABORTED_AFTER_DATA = Symbol('aborted after data');

/** What the SMTP sessions of an attempt came to, or how far they got when stopped. */
type SessionResult =
  | { outcome: AttemptOutcome; tls: boolean | null; deliveredTo: string[] }
  | typeof ABORTED_BEFORE_DATA
  | typeof ABORTED_AFTER_DATA;

/** Recipients grouped by their (ASCII) domain, in first-seen order. */
export function byDomain(recipients: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const recipient of recipients) {
    const at = recipient.lastIndexOf('@');
    const domain = domainToASCII(recipient.slice(at + 1).toLowerCase()) || recipient.slice(at + 1);
    groups.set(domain, [...(groups.get(domain) ?? []), recipient]);
  }
  return groups;
}

/**
 * One outcome for an attempt over several recipient domains: any transient failure makes it a
 * transient failure (the retry sends only to recipients not delivered yet); otherwise it is
 * delivered when some recipient ever accepted it, bounced (by the first refusal) when none did.
 */
export function combine(
  results: ReadonlyArray<{ recipients: string[]; result: SendResult }>,
  anyDelivered: boolean,
): AttemptOutcome {
  const transient = results.find((entry) => entry.result.kind === 'transient');
  if (transient && transient.result.kind === 'transient') {
    return {
      kind: 'transient_error',
      status: 'Deferred',
      remoteHost: transient.result.host,
      reply: transient.result.reply,
    };
  }
  const permanent = results.find((entry) => entry.result.kind === 'permanent');
  const accepted = results.find((entry) => entry.result.kind === 'accepted');
  if (anyDelivered || !permanent || permanent.result.kind !== 'permanent') {
    const parts = results.map((entry) =>
      entry.result.kind === 'accepted'
        ? entry.result.reply
        : entry.result.kind === 'permanent'
          ? `${entry.recipients.join(', ')}: ${formatSmtpReply(entry.result.reply)}`
          : '',
    );
    return {
      kind: 'delivered',
      status: 'Delivered',
      remoteHost: accepted?.result.host ?? '',
      reply: parts.filter(Boolean).join('; ') || 'delivered earlier',
    };
  }
  return {
    kind: 'bounced',
    status: 'Bounced',
    remoteHost: permanent.result.host,
    reply: formatSmtpReply(permanent.result.reply),
    bounceClassification: classifyBounce(permanent.result.reply),
  };
}
