import { randomUUID } from 'node:crypto';
import { domainToASCII } from 'node:url';

import type { RecipientOutcomeData } from '@envoi/contracts-delivery';
import {
  type AnyDeliveryJob,
  type DeliveryBatchJob,
  type DeliveryJob,
  type DeliveryView,
  MessagesStreamSubjects,
} from '@envoi/contracts-messages';
import {
  enqueueOutbox,
  type OutboxEntry,
  outboxEntry,
  OutboxRelayService,
} from '@envoi/shared-outbox';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { AttemptWrites } from '../attempts/attempt-writes';
import {
  type AttemptRow,
  AttemptsRepository,
  type OutcomeRecord,
  type SettledRecipients,
} from '../attempts/attempts.repository';
import { type AttemptGate, ClaimKeeper } from '../attempts/claim-keeper';
import { DeliveryConfig } from '../delivery.config';
import { nextRetry, type RetryPolicy } from '../retry/retry-schedule';
import { SenderDomainGoneError, SenderKeys } from '../senders/sender-keys.service';
import { linkedSignal } from '../smtp/linked-signal';
import type { MxResolver } from '../smtp/mx-resolver';
import type { SmtpSender } from '../smtp/smtp-sender';
import { bounceAddress } from '../smtp/verp';
import { AccountHolds } from './account-holds';
import { Batcher, type BatcherLimits } from './batcher';
import { chunkSettlement, type Settlement } from './chunk-settlement';
import { MessageSlots } from './message-slots';
import { hasContent, type MessageView, MessageViews } from './message-views';
import {
  type AttemptOutcome,
  isAttemptable,
  outcomeEvent,
  outcomeSubject,
  sandboxOutcome,
} from './outcomes';
import {
  giveUp,
  printableOutcome,
  routeFailureOutcomes,
  sameOutcome,
  sendOutcomes,
  summarize,
} from './recipient-outcomes';

export const MX_RESOLVER = Symbol('MX_RESOLVER');
export const SMTP_SENDER = Symbol('SMTP_SENDER');

export type { Settlement };

/** Longest a job waits for a scheduled first attempt before it is looked at again. */
const MAX_SCHEDULE_WAIT_MS = 3_600_000;
/** Tries to record an outcome after the message went out, before leaving it to the lease. */
const RECORD_TRIES = 3;

const ack = (note: string): Settlement => ({ kind: 'ack', note });

const HANDED_BACK: Settlement = { kind: 'nak', delayMs: 0, note: 'handed back (stopping)' };

/** One-message jobs pulled together read their attempts in one query. */
const ATTEMPT_LOOKUP_BATCH: BatcherLimits = { maxItems: 100, maxWaitMs: 2 };

const NOTHING_SETTLED: SettledRecipients = { delivered: new Set(), bounced: new Set() };

/** An attempt's message and the recipients it is for (those earlier attempts did not settle). */
interface AttemptTarget {
  view: MessageView;
  settled: SettledRecipients;
  pending: string[];
}

/**
 * One delivery job: reads the message, decides without network I/O when it can (a duplicate
 * job, a final status, not yet due, expired, sandbox), otherwise sends over SMTP (claiming the
 * attempt once a session has a connection) and records the outcome, its event and any retry job
 * in one transaction.
 */
@Injectable()
export class DeliveryService {
  private readonly logger = new Logger(DeliveryService.name);
  private readonly retryPolicy: RetryPolicy;
  /** Messages in delivery on this replica, whatever job they came in. */
  private readonly slots: MessageSlots;
  private readonly attemptLookups: Batcher<
    { messageId: string; attempt: number },
    AttemptRow | null
  >;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly attempts: AttemptsRepository,
    private readonly messageViews: MessageViews,
    private readonly config: DeliveryConfig,
    private readonly senderKeys: SenderKeys,
    @Inject(MX_RESOLVER) private readonly router: MxResolver,
    @Inject(SMTP_SENDER) private readonly sender: SmtpSender,
    private readonly outbox: OutboxRelayService,
    private readonly claims: ClaimKeeper,
    private readonly writes: AttemptWrites,
    private readonly holds: AccountHolds,
  ) {
    this.slots = new MessageSlots(config.DELIVERY_CONCURRENCY);
    this.attemptLookups = new Batcher(ATTEMPT_LOOKUP_BATCH, (keys) => attempts.findPairs(keys));
    this.retryPolicy = {
      scheduleMs: config.retryScheduleMs(),
      jitterRatio: config.retryJitterRatio(),
      maxAgeMs: config.maxMessageAgeMs(),
    };
  }

  /**
   * Handles one job (one message, or a chunk of a send's messages); throws for a failure worth
   * retrying soon (the bus, the database).
   */
  async process(
    job: AnyDeliveryJob,
    signal: AbortSignal,
    messageDone: () => void = () => undefined,
  ): Promise<Settlement> {
    const held = await this.holds.holdOf(job.account_id);
    if (held) return held;
    if ('message_ids' in job) return this.processChunk(job, signal, messageDone);
    const existing = await this.attemptLookups.add({
      messageId: job.message_id,
      attempt: job.attempt,
    });
    const settled = this.settledByLog(existing, new Date());
    if (settled) return settled;
    const view = await this.messageViews.one(job.message_id);
    return this.slots.run(() => this.processMessage(job, existing, view, signal));
  }

  /**
   * A chunk's messages: the attempts log and the views read once for all, then each message as
   * a job of its own would be, in a slot of the replica, grouped by destination domain so that
   * pooled connections are reused. A message whose attempt is recorded is skipped (the job ran
   * before); the job is handed back when any message must be looked at again.
   */
  private async processChunk(
    job: DeliveryBatchJob,
    signal: AbortSignal,
    messageDone: () => void,
  ): Promise<Settlement> {
    const logged = await this.attempts.findEach(job.message_ids, job.attempt);
    const now = new Date();
    const settlements: Settlement[] = [];
    const open: string[] = [];
    for (const messageId of job.message_ids) {
      const settled = this.settledByLog(logged.get(messageId) ?? null, now);
      if (settled) settlements.push(settled);
      else open.push(messageId);
    }
    const { views, separately } =
      open.length > 0 ? await this.messageViews.chunk(open) : { views: [], separately: [] };
    for (let missing = open.length - views.length - separately.length; missing > 0; missing--) {
      settlements.push(ack('message not found'));
    }
    const inSlot = (messageId: string, read: () => Promise<MessageView | null>) =>
      this.slots.run(async () => {
        if (signal.aborted) return HANDED_BACK;
        const own: DeliveryJob = {
          message_id: messageId,
          account_id: job.account_id,
          attempt: job.attempt,
        };
        try {
          return await this.processMessage(
            own,
            logged.get(messageId) ?? null,
            await read(),
            signal,
          );
        } finally {
          messageDone();
        }
      });
    const results = await Promise.allSettled([
      ...byFirstDomain(views).map((view) => inSlot(view.id, () => Promise.resolve(view))),
      // Too large for the chunk's reply: each read alone, just before it is sent.
      ...separately.map((messageId) =>
        inSlot(messageId, () => this.messageViews.separate(messageId)),
      ),
    ]);
    for (const result of results) {
      if (result.status === 'rejected') throw result.reason;
      settlements.push(result.value);
    }
    return chunkSettlement(settlements);
  }

  /** What the attempts log settles before the message is read: done, or held elsewhere. */
  private settledByLog(existing: AttemptRow | null, now: Date): Settlement | null {
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
    return null;
  }

  /** One message of a job, its attempt not settled by the log as read before. */
  private async processMessage(
    job: DeliveryJob,
    existing: AttemptRow | null,
    view: MessageView | null,
    signal: AbortSignal,
  ): Promise<Settlement> {
    const now = new Date();
    if (!view) return ack('message not found');
    if (view.account_id !== job.account_id) return { kind: 'term', note: 'account mismatch' };
    if (!existing && !isAttemptable(view.status)) return ack(`message is ${view.status}`);
    const settled =
      job.attempt > 1 ? await this.attempts.settledBefore(view.id, job.attempt) : NOTHING_SETTLED;
    const target: AttemptTarget = {
      view,
      settled,
      pending: view.envelope_recipients.filter(
        (recipient) => !settled.delivered.has(recipient) && !settled.bounced.has(recipient),
      ),
    };
    if (existing) return this.takeOver(existing, target);

    const firstAttemptAt = view.first_attempt_at ? new Date(view.first_attempt_at) : null;
    if (job.attempt === 1 && firstAttemptAt && firstAttemptAt > now) {
      const delayMs = Math.min(firstAttemptAt.getTime() - now.getTime(), MAX_SCHEDULE_WAIT_MS);
      return { kind: 'nak', delayMs, note: 'not due yet' };
    }
    const expiresAt = view.expires_at ? new Date(view.expires_at) : null;
    if (expiresAt && now > expiresAt) {
      // Never attempted: dropped as Expired; after attempts: the retries ran out of time.
      const reply =
        job.attempt === 1 ? 'expired before delivery' : 'expired before the next attempt';
      const outcome = this.failAll(
        target,
        reply,
        'expired',
        job.attempt === 1 ? 'Expired' : 'Failed',
      );
      return this.recordWithoutSending(job, target, outcome, now);
    }
    if (view.sandbox) {
      const outcome = sandboxOutcome(view.sandbox_result, target.pending);
      return this.recordWithoutSending(job, target, outcome, now);
    }
    if (!hasContent(view)) {
      const reply = 'the message content was purged before delivery';
      return this.recordWithoutSending(
        job,
        target,
        this.failAll(target, reply, 'not_sendable'),
        now,
      );
    }

    const gate = this.claims.gate({
      messageId: job.message_id,
      accountId: job.account_id,
      attempt: job.attempt,
      startedAt: now,
    });
    try {
      return await this.attempt(job, target, gate, signal);
    } finally {
      gate.letGo();
    }
  }

  /** Every pending recipient failed for good, for one reason. */
  private failAll(
    target: AttemptTarget,
    reply: string,
    failureReason: 'expired' | 'not_sendable',
    failedStatus: 'Failed' | 'Expired' = 'Failed',
  ): AttemptOutcome {
    return summarize(sameOutcome(target.pending, { result: 'failed', remote_host: '', reply }), {
      deliveredEarlier: target.settled.delivered.size > 0,
      failureReason,
      failedStatus,
    });
  }

  private async attempt(
    job: DeliveryJob,
    target: AttemptTarget,
    gate: AttemptGate,
    signal: AbortSignal,
  ): Promise<Settlement> {
    const { view } = target;
    let result: SessionResult;
    try {
      result = await this.send(target, signal, gate);
    } catch (error) {
      // Nothing went out: give the attempt back so that the retried job can run it.
      if (gate.claim) await this.attempts.release(gate.claim).catch(() => undefined);
      if (error instanceof SenderDomainGoneError) {
        const outcome = this.failAll(target, error.message, 'not_sendable');
        return this.recordWithoutSending(job, target, outcome, new Date());
      }
      throw error;
    }
    if (result === ABORTED_BEFORE_DATA || result === ABORTED_AFTER_DATA) {
      if (result === ABORTED_AFTER_DATA) {
        this.logger.warn(
          `${view.id}: attempt ${job.attempt} stopped after its data was sent; it runs again and the recipient may get it twice (RFC 1047)`,
        );
      }
      if (gate.claim) await this.attempts.release(gate.claim);
      return HANDED_BACK;
    }
    if (result === CLAIM_GONE) {
      // Nothing went out. Held elsewhere: look again later; taken over: the next delivery acks.
      return { kind: 'nak', delayMs: 1_000, note: `claim ${gate.stopped ?? 'lost'}` };
    }
    const now = new Date();
    const record = {
      ...(await this.withFollowUps(job, target, result.outcome, now, result.tls)),
      startedAt: gate.startedAt,
    };
    const claim = gate.claim;
    for (let tryNumber = 1; ; tryNumber++) {
      try {
        // No session opened (no route, no server reachable, the deadline while waiting for a
        // connection): the attempt was never claimed, and is recorded as it ends.
        const finished = await this.writes.record(
          claim
            ? { kind: 'claimed', claim, record }
            : { kind: 'unclaimed', ...unclaimedAttempt(job, false), record },
        );
        if (!finished && claim) {
          return ack('claim lost to a takeover; its outcome is recorded there');
        }
        if (!finished) {
          // Another worker ran (or runs) this attempt: look again, as a duplicate job would.
          return { kind: 'nak', delayMs: 1_000, note: 'attempt recorded or claimed elsewhere' };
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

  /** One attempt, bounded by SMTP_ATTEMPT_TIMEOUT_MS. */
  private async send(
    target: AttemptTarget,
    signal: AbortSignal,
    gate: AttemptGate,
  ): Promise<SessionResult> {
    const deadline = linkedSignal(signal);
    const timer = setTimeout(deadline.abort, this.config.SMTP_ATTEMPT_TIMEOUT_MS);
    try {
      return await this.sendBefore(target, signal, deadline.signal, gate);
    } finally {
      clearTimeout(timer);
      deadline.unlink();
    }
  }

  /**
   * Routes and sends to the pending recipients, one transaction per recipient domain; each
   * recipient gets its own outcome (a server may take some and refuse or defer others).
   */
  private async sendBefore(
    { view, settled, pending }: AttemptTarget,
    signal: AbortSignal,
    deadline: AbortSignal,
    gate: AttemptGate,
  ): Promise<SessionResult> {
    // Composed in the message's slot, just before it is signed.
    const raw = await this.messageViews.raw(view);
    const key = await this.senderKeys.keyOf(view.account_id, view.domain);
    const from = bounceAddress(view.id, key.returnPathHost, this.config.RETURN_PATH_TARGET);

    const outcomes: RecipientOutcomeData[] = [];
    const secure: boolean[] = [];
    for (const [domain, recipients] of byDomain(pending)) {
      const route = await this.router.route(domain);
      if (route.kind !== 'hosts') {
        outcomes.push(...routeFailureOutcomes(recipients, route));
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
        gate,
      );
      if (result.kind === 'aborted') {
        if (signal.aborted) return result.dataSent ? ABORTED_AFTER_DATA : ABORTED_BEFORE_DATA;
        if (gate.stopped && !result.dataSent) return CLAIM_GONE;
        // The attempt's own deadline: a transient failure like any timeout.
        outcomes.push(
          ...sameOutcome(recipients, {
            result: 'transient_error',
            remote_host: result.host,
            reply: `attempt timed out after ${this.config.SMTP_ATTEMPT_TIMEOUT_MS} ms`,
          }),
        );
        continue;
      }
      if (result.kind === 'accepted') secure.push(result.secure);
      outcomes.push(...sendOutcomes(recipients, result));
    }
    return {
      outcome: summarize(outcomes, { deliveredEarlier: settled.delivered.size > 0 }),
      tls: secure.length > 0 ? secure.every(Boolean) : null,
    };
  }

  /**
   * A job came back for an attempt whose worker vanished mid-attempt (its lease ran out). The
   * message may or may not have reached the server (RFC 1047): the attempt is recorded as a
   * transient failure and the next one follows the retry schedule, so the message is never
   * lost, at the price of a possible duplicate in that one window.
   */
  private async takeOver(row: AttemptRow, target: AttemptTarget): Promise<Settlement> {
    const now = new Date();
    const outcome = summarize(
      sameOutcome(target.pending, {
        result: 'transient_error',
        remote_host: row.remoteHost,
        reply:
          'the worker running this attempt stopped before recording its outcome; the message may have been received (RFC 1047)',
      }),
      { deliveredEarlier: target.settled.delivered.size > 0 },
    );
    const record = await this.withFollowUps(
      { message_id: row.messageId, account_id: row.accountId, attempt: row.attempt },
      target,
      outcome,
      now,
      null,
    );
    const takenOver = await this.recordWith(record, (manager) =>
      this.attempts.takeOver(row, now, record, manager),
    );
    if (!takenOver) {
      return { kind: 'nak', delayMs: 1_000, note: 'attempt changed meanwhile' };
    }
    this.outbox.notify();
    return ack('abandoned attempt taken over');
  }

  private async recordWithoutSending(
    job: DeliveryJob,
    target: AttemptTarget,
    outcome: AttemptOutcome,
    now: Date,
  ): Promise<Settlement> {
    const { view } = target;
    const record = await this.withFollowUps(job, target, outcome, now, null);
    const written = await this.writes.record({
      kind: 'unclaimed',
      ...unclaimedAttempt(job, view.sandbox),
      record,
    });
    if (!written) return ack('attempt already recorded (duplicate job)');
    this.outbox.notify();
    return ack(`${outcome.status}: ${outcome.reply}`);
  }

  /**
   * One transaction: writes the attempt's outcome with `write` and, when that matched the
   * attempt, the record's outbox rows (its event, maybe the next job). Whether it wrote.
   */
  private recordWith(
    record: OutcomeRecord,
    write: (manager: EntityManager) => Promise<boolean>,
  ): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await write(manager))) return false;
      await enqueueOutbox(manager, record.entries);
      return true;
    });
  }

  /**
   * The outcome as recorded: a transient failure of a real attempt becomes a retry at the next
   * scheduled time (or, when none is left, the final failure), with its event and job.
   */
  private async withFollowUps(
    job: DeliveryJob,
    { view, settled }: AttemptTarget,
    outcome: AttemptOutcome,
    now: Date,
    tls: boolean | null,
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
        final = giveUp(outcome, decision.reason, settled.delivered.size > 0);
      }
    }
    final = printableOutcome(final);
    const eventId = randomUUID();
    entries.unshift(
      outboxEntry(
        outcomeSubject(final.kind),
        eventId,
        outcomeEvent(eventId, view, job.attempt, final, now),
      ),
    );
    return { outcome: final, finishedAt: now, tls, nextAttemptAt, entries };
  }
}

const ABORTED_BEFORE_DATA = Symbol('aborted before data');
const ABORTED_AFTER_DATA = Symbol('aborted after data');
/** Another worker held the attempt when a session opened, or took it over before its data. */
const CLAIM_GONE = Symbol('claim gone');

/** What the SMTP sessions of an attempt came to, or how far they got when stopped. */
type SessionResult =
  | { outcome: AttemptOutcome; tls: boolean | null }
  | typeof ABORTED_BEFORE_DATA
  | typeof ABORTED_AFTER_DATA
  | typeof CLAIM_GONE;

/** Which attempt of which message a job's unclaimed outcome is for. */
function unclaimedAttempt(job: DeliveryJob, sandbox: boolean) {
  return { messageId: job.message_id, accountId: job.account_id, attempt: job.attempt, sandbox };
}

/** The (ASCII, lowercase) domain of an address. */
function domainOf(address: string): string {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  return domainToASCII(domain.toLowerCase()) || domain;
}

/** Recipients grouped by their (ASCII) domain, in first-seen order. */
export function byDomain(recipients: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const recipient of recipients) {
    const domain = domainOf(recipient);
    groups.set(domain, [...(groups.get(domain) ?? []), recipient]);
  }
  return groups;
}

/** Views grouped by the domain of their first recipient, in first-seen order. */
export function byFirstDomain<View extends DeliveryView>(views: readonly View[]): View[] {
  const groups = new Map<string, View[]>();
  for (const view of views) {
    const domain = domainOf(view.envelope_recipients[0] ?? '');
    const group = groups.get(domain);
    if (group) group.push(view);
    else groups.set(domain, [view]);
  }
  return [...groups.values()].flat();
}
