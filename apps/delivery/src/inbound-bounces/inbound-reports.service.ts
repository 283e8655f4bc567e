import { randomUUID } from 'node:crypto';

import { ComplaintStreamSubjects, type RecipientOutcomeData } from '@envoi/contracts-delivery';
import type { DeliveryView } from '@envoi/contracts-messages';
import type { BounceMailData, FeedbackMailData, InboundEnvelope } from '@envoi/contracts-routes';
import { NATS_CONNECTION, readUpload, UploadUnavailableError } from '@envoi/shared-nats';
import { enqueueOutbox, outboxEntry, OutboxRelayService } from '@envoi/shared-outbox';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

import { AttemptsRepository } from '../attempts/attempts.repository';
import { DeliveryConfig } from '../delivery.config';
import { formatSmtpReply } from '../smtp/smtp-reply';
import { MessageViews } from '../worker/message-views';
import { outcomeEvent, outcomeSubject } from '../worker/outcomes';
import { printableOutcome } from '../worker/recipient-outcomes';
import type { BounceReport, ComplaintReport, InboundReport } from './inbound-report';
import { InboundReportsRepository, type UnmatchedMail } from './inbound-reports.repository';
import { messageUuidOfOriginal } from './message-ref';
import { parseInboundMail } from './parse-inbound-mail';

/** Why a mail was not applied to a message (kept with it in inbound_unmatched). */
type Unmatched = { unmatched: string };

/** A spooled mail read: what it reports, or why it cannot be read (with its bytes if any). */
type ReadMail = { bytes: Buffer; report: InboundReport } | (Unmatched & { bytes?: Buffer });

/**
 * Applies the mail the MX received for the platform's bounce and feedback addresses
 * (issue 17): an asynchronous bounce becomes an attempt of its message and `message.bounced`,
 * as a synchronous bounce does (the message becomes Bounced even after Delivered; a hard bounce
 * suppresses the recipient through the suppressions service); a complaint becomes
 * `message.complaint` (a suppression with reason `complaint`). A delay warning changes nothing
 * (logged): the receiving side still tries, and a later failure comes as a bounce. Mail that
 * matches no message, or that says nothing we understand, is kept in inbound_unmatched. Each
 * report is applied to a message once, whatever the redeliveries.
 */
@Injectable()
export class InboundReportsService {
  private readonly logger = new Logger(InboundReportsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly views: MessageViews,
    private readonly attempts: AttemptsRepository,
    private readonly reports: InboundReportsRepository,
    private readonly outbox: OutboxRelayService,
    private readonly config: DeliveryConfig,
  ) {}

  /** Mail to VERP bounce addresses: each address names the message it is about. */
  async bounce(data: BounceMailData): Promise<void> {
    const read = await this.read(data);
    for (const { address, message_uuid: messageId } of data.recipients) {
      const result =
        'unmatched' in read ? read : await this.applyBounceMail(data, messageId, read.report);
      if (result) await this.keep(data, 'bounce', address, result.unmatched, read);
    }
  }

  /** Mail to the feedback address: the report's copy of the original names the message. */
  async feedback(data: FeedbackMailData): Promise<void> {
    const read = await this.read(data);
    const result = 'unmatched' in read ? read : await this.applyFeedbackMail(data, read.report);
    if (result) await this.keep(data, 'feedback', data.recipient, result.unmatched, read);
  }

  private async applyFeedbackMail(
    envelope: InboundEnvelope,
    report: InboundReport,
  ): Promise<Unmatched | null> {
    if (report.kind !== 'complaint') return { unmatched: `not a complaint (${describe(report)})` };
    const messageId = messageUuidOfOriginal(report.originalReturnPath, report.originalMessageId);
    if (!messageId) return { unmatched: 'the report names no message of ours' };
    return this.applyComplaint(envelope, messageId, report);
  }

  private async applyBounceMail(
    envelope: InboundEnvelope,
    messageId: string,
    report: InboundReport,
  ): Promise<Unmatched | null> {
    switch (report.kind) {
      case 'bounce':
        return this.applyBounce(envelope, messageId, report);
      case 'complaint':
        return this.applyComplaint(envelope, messageId, report);
      case 'delayed':
        this.logger.log(
          `inbound ${envelope.inbound_id}: delivery of ${messageId} delayed for ` +
            `${report.recipients.join(', ') || 'its recipient'}; nothing to record`,
        );
        return null;
      case 'not_a_report':
        return { unmatched: `not a bounce (${report.reason})` };
    }
  }

  private async applyBounce(
    envelope: InboundEnvelope,
    messageId: string,
    report: BounceReport,
  ): Promise<Unmatched | null> {
    const view = await this.views.withoutContent(messageId);
    if (!view) return { unmatched: `message ${messageId} not found` };
    if (view.sandbox) return { unmatched: `message ${messageId} is a sandbox message` };
    const recipients = bouncedRecipients(view, report);
    const first = recipients[0];
    if (!first) {
      const named = report.recipients.map((entry) => entry.recipient).join(', ');
      return { unmatched: `the bounce names ${named}, not a recipient of message ${messageId}` };
    }
    const outcome = printableOutcome({
      kind: 'bounced',
      status: 'Bounced',
      remoteHost: first.remote_host,
      reply: first.reply,
      bounceClassification: first.bounce_classification ?? 'soft',
      recipients,
    });
    const applied = await this.dataSource.transaction(async (manager) => {
      const outcomeName = outcome.bounceClassification ?? 'soft';
      if (!(await this.reports.claim(manager, envelope.inbound_id, view.id, outcomeName))) {
        return false;
      }
      const attempt = await this.reports.nextAttempt(manager, view.id);
      const now = new Date();
      const eventId = randomUUID();
      const entries = [
        outboxEntry(
          outcomeSubject('bounced'),
          eventId,
          outcomeEvent(eventId, view, attempt, outcome, now),
        ),
      ];
      await this.attempts.recordEach(
        [
          {
            kind: 'unclaimed',
            messageId: view.id,
            accountId: view.account_id,
            attempt,
            sandbox: false,
            record: { outcome, finishedAt: now, tls: null, nextAttemptAt: null, entries },
          },
        ],
        manager,
      );
      await enqueueOutbox(manager, entries);
      return true;
    });
    if (applied) {
      this.outbox.notify();
      this.logger.log(
        `inbound ${envelope.inbound_id}: message ${view.id} bounced (${outcome.bounceClassification}) ` +
          `after it was ${view.status}: ${outcome.reply}`,
      );
    }
    return null;
  }

  private async applyComplaint(
    envelope: InboundEnvelope,
    messageId: string,
    report: ComplaintReport,
  ): Promise<Unmatched | null> {
    const view = await this.views.withoutContent(messageId);
    if (!view) return { unmatched: `message ${messageId} not found` };
    if (view.sandbox) return { unmatched: `message ${messageId} is a sandbox message` };
    const recipient = complainingRecipient(view, report);
    if (!recipient) {
      return { unmatched: `the complaint names no recipient of message ${messageId}` };
    }
    const eventId = randomUUID();
    const applied = await this.dataSource.transaction(async (manager) => {
      if (!(await this.reports.claim(manager, envelope.inbound_id, view.id, 'complaint'))) {
        return false;
      }
      await enqueueOutbox(manager, [
        outboxEntry(ComplaintStreamSubjects.complaint, eventId, {
          id: eventId,
          type: 'message.complaint',
          timestamp: new Date().toISOString(),
          data: {
            account_id: view.account_id,
            id: view.id,
            from: view.sender,
            recipient,
            feedback_type: report.feedbackType,
            user_agent: report.userAgent?.slice(0, 255) ?? null,
          },
        }),
      ]);
      return true;
    });
    if (applied) {
      this.outbox.notify();
      this.logger.log(
        `inbound ${envelope.inbound_id}: ${recipient} complained (${report.feedbackType}) ` +
          `about message ${view.id}`,
      );
    }
    return null;
  }

  /** The spooled mail and what it reports; unmatched when it is gone or cannot be parsed. */
  private async read(envelope: InboundEnvelope): Promise<ReadMail> {
    let bytes: Buffer;
    try {
      bytes = await readUpload(this.connection, envelope.spool);
    } catch (error) {
      if (error instanceof UploadUnavailableError) return { unmatched: error.message };
      throw error;
    }
    try {
      return { bytes, report: await parseInboundMail(bytes) };
    } catch (error) {
      return {
        bytes,
        unmatched: `malformed: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  }

  private async keep(
    envelope: InboundEnvelope,
    kind: UnmatchedMail['kind'],
    recipient: string,
    reason: string,
    read: { bytes?: Buffer },
  ): Promise<void> {
    const content = read.bytes
      ? read.bytes.subarray(0, this.config.INBOUND_UNMATCHED_MAX_BYTES)
      : null;
    await this.reports.storeUnmatched({ envelope, kind, recipient, reason, content });
    this.logger.warn(`inbound ${envelope.inbound_id} to ${recipient} kept unmatched: ${reason}`);
  }
}

/**
 * The message's recipients the bounce reports, each with its reply. A report that names no
 * recipient (a text bounce that quoted none) is about the message's only recipient, if it has
 * one; a named recipient must be one of the message's.
 */
function bouncedRecipients(view: DeliveryView, report: BounceReport): RecipientOutcomeData[] {
  const byAddress = new Map(view.envelope_recipients.map((email) => [email.toLowerCase(), email]));
  const only = view.envelope_recipients.length === 1 ? view.envelope_recipients[0] : undefined;
  const seen = new Set<string>();
  return report.recipients.flatMap((entry) => {
    const email = entry.recipient === null ? only : byAddress.get(entry.recipient);
    if (email === undefined || seen.has(email)) return [];
    seen.add(email);
    return [
      {
        email,
        result: 'bounced' as const,
        remote_host: entry.remoteMta ?? report.reportingMta ?? '',
        reply: formatSmtpReply(entry.reply),
        bounce_classification: entry.classification,
      },
    ];
  });
}

/**
 * Who complained: the report's recipient when it is one of the message's (reporters often
 * redact it), else the message's only recipient.
 */
function complainingRecipient(view: DeliveryView, report: ComplaintReport): string | null {
  const named = report.recipient;
  const match = view.envelope_recipients.find((email) => email.toLowerCase() === named);
  if (match) return match;
  return view.envelope_recipients.length === 1 ? (view.envelope_recipients[0] ?? null) : null;
}

function describe(report: InboundReport): string {
  return report.kind === 'not_a_report' ? report.reason : report.kind;
}
