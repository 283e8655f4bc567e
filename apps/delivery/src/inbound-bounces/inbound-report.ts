import type { BounceClassification } from '@envoi/contracts-delivery';

import { classifyBounce, parseSmtpReply, type SmtpReply } from '../smtp/smtp-reply';
import { bareAddress, type FieldBlock, fieldBlocks, typedValue } from './report-fields';

/** What one mail sent back to the platform says. */
export type InboundReport = BounceReport | DelayReport | ComplaintReport | NotAReport;

/** A permanent failure (RFC 3464 `Action: failed`, or a bounce's text saying so). */
export interface BounceReport {
  kind: 'bounce';
  reportingMta: string | null;
  recipients: BouncedRecipient[];
}

export interface BouncedRecipient {
  /** The original recipient, lowercased; null when the report does not say. */
  recipient: string | null;
  classification: BounceClassification;
  reply: SmtpReply;
  remoteMta: string | null;
}

/** A delivery delay warning (`Action: delayed`): the receiving side still tries. */
export interface DelayReport {
  kind: 'delayed';
  recipients: string[];
}

/** An ARF feedback report (RFC 5965) saying a recipient complained. */
export interface ComplaintReport {
  kind: 'complaint';
  feedbackType: string;
  userAgent: string | null;
  /** Original-Rcpt-To, or the original's recipient header (often redacted by the reporter). */
  recipient: string | null;
  /** The original message's Return-Path and Message-ID, when the report includes its headers. */
  originalReturnPath: string | null;
  originalMessageId: string | null;
}

/** Auto-replies, unrelated mail, not-spam feedback: nothing to act on. */
export interface NotAReport {
  kind: 'not_a_report';
  reason: string;
}

/** The parts of a received mail the analysis reads (as mailparser gives them). */
export interface MailParts {
  /** Top-level headers, names lowercased. */
  headers: ReadonlyMap<string, string>;
  /** The text of the mail, its text parts and delivery-status parts included. */
  text: string;
  attachments: ReadonlyArray<{ contentType: string; content: Buffer }>;
  /**
   * The header sections of the returned original message (message/rfc822 or
   * text/rfc822-headers parts), which mailparser renders into the text or leaves out.
   */
  originals: readonly string[];
}

/** Feedback types that are complaints; `not-spam` and `auth-failure` are not. */
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

/** Report parts whose fields the analysis reads wherever mailparser put them. */
const REPORT_PART_TYPES = new Set([
  'message/delivery-status',
  'message/global-delivery-status',
  'message/feedback-report',
]);

/**
 * What a mail sent to a bounce or feedback address says: an ARF report by its feedback fields,
 * an RFC 3464 DSN by its per-recipient fields, otherwise the text of the common non-standard
 * bounces (Exim, qmail, Yahoo, Exchange, Sendmail, Gmail…). Auto-replies are no reports.
 */
export function analyseMail(mail: MailParts): InboundReport {
  const reportText = [
    mail.text,
    ...mail.attachments
      .filter((part) => REPORT_PART_TYPES.has(part.contentType.toLowerCase()))
      .map((part) => part.content.toString('utf8')),
  ].join('\n\n');
  const blocks = fieldBlocks(reportText);
  const originals = mail.originals
    .map((text) => fieldBlocks(text)[0])
    .filter((block): block is FieldBlock => block !== undefined);
  const feedback = blocks.find((block) => block.has('feedback-type'));
  if (feedback) return complaintOf(feedback, originals);
  if (originals.some((headers) => headers.has('x-hmxmroriginalrecipient'))) {
    return complaintOf(new Map([['feedback-type', 'abuse']]), originals);
  }
  const dsn = dsnReport(blocks);
  if (dsn) return dsn;
  if (isAutoReply(mail.headers) && !fromMailSystem(mail.headers))
    return { kind: 'not_a_report', reason: 'auto-reply' };
  return textReport(mail);
}

function complaintOf(feedback: FieldBlock, originals: readonly FieldBlock[]): InboundReport {
  const feedbackType = (feedback.get('feedback-type') ?? '').toLowerCase();
  if (!COMPLAINT_TYPES.has(feedbackType)) {
    return { kind: 'not_a_report', reason: `feedback type ${feedbackType || 'missing'}` };
  }
  const original = (name: string) =>
    originals.map((headers) => headers.get(name)).find((value) => value !== undefined) ?? null;
  return {
    kind: 'complaint',
    feedbackType,
    userAgent: feedback.get('user-agent') ?? null,
    recipient:
      bareAddress(feedback.get('original-rcpt-to')) ??
      bareAddress(original('x-hmxmroriginalrecipient')) ??
      bareAddress(original('to')),
    originalReturnPath: bareAddress(original('return-path')),
    originalMessageId: original('message-id'),
  };
}

/** An RFC 3464 report, or null when the text holds no per-recipient fields. */
function dsnReport(blocks: readonly FieldBlock[]): InboundReport | null {
  const perRecipient = blocks.filter(
    (block) =>
      (block.has('final-recipient') || block.has('original-recipient')) &&
      (block.has('action') || block.has('status')),
  );
  if (perRecipient.length === 0) return null;
  const reportingMta = typedValue(
    blocks.find((block) => block.has('reporting-mta'))?.get('reporting-mta'),
  );
  const failed: BouncedRecipient[] = [];
  const delayed: string[] = [];
  for (const block of perRecipient) {
    const recipient =
      bareAddress(typedValue(block.get('final-recipient'))) ??
      bareAddress(typedValue(block.get('original-recipient')));
    const status = ENHANCED_IN_TEXT.exec(block.get('status') ?? '')?.[1] ?? null;
    const action = (block.get('action') ?? (status?.startsWith('5') ? 'failed' : '')).toLowerCase();
    if (action === 'delayed') {
      if (recipient) delayed.push(recipient);
    } else if (action === 'failed') {
      const reply = replyOf(status, typedValue(block.get('diagnostic-code')));
      failed.push({
        recipient,
        classification: classifyBounce(reply),
        reply,
        remoteMta: typedValue(block.get('remote-mta')),
      });
    }
  }
  if (failed.length > 0) return { kind: 'bounce', reportingMta, recipients: failed };
  if (delayed.length > 0) return { kind: 'delayed', recipients: delayed };
  return { kind: 'not_a_report', reason: 'no failed or delayed recipient' };
}

const ENHANCED_IN_TEXT = /\b([245]\.\d{1,3}\.\d{1,3})\b/;

/**
 * The reply a recipient's failure comes to: the DSN's Status (unless a generic `x.0.0` and the
 * diagnostic code is more precise), the diagnostic's basic code and text.
 */
function replyOf(status: string | null, diagnostic: string | null): SmtpReply {
  const parsed = parseSmtpReply(diagnostic?.replace(/^([2-5]\d\d):?\s*#?/, '$1 ') ?? null);
  const inText = ENHANCED_IN_TEXT.exec(diagnostic ?? '')?.[1] ?? null;
  const precise = parsed?.enhanced ?? inText;
  const enhanced = status && !(status.endsWith('.0.0') && precise) ? status : (precise ?? status);
  const code = parsed?.code ?? (enhanced?.startsWith('4') ? 450 : 554);
  return { code, enhanced, text: parsed?.text ?? diagnostic ?? '' };
}

const AUTO_REPLY_SUBJECT =
  /^\s*(out of (the )?office|automatic reply|auto(matic)?[- ]?(reply|response)|autoreply|abwesenheit|vacation|away from)/i;

/** RFC 3834 and the common vendor markers of an auto-reply (out of office, vacation). */
function isAutoReply(headers: ReadonlyMap<string, string>): boolean {
  const submitted = (headers.get('auto-submitted') ?? '').toLowerCase();
  return (
    submitted.startsWith('auto-replied') ||
    headers.has('x-autoreply') ||
    headers.has('x-autorespond') ||
    /auto[_-]?reply/i.test(headers.get('precedence') ?? '') ||
    AUTO_REPLY_SUBJECT.test(headers.get('subject') ?? '')
  );
}

const MAIL_SYSTEM = /(mailer-daemon|postmaster|mail delivery|microsoftexchange)/i;

/** Mail systems mark their bounces auto-replied too (Exim): those are no out-of-office. */
function fromMailSystem(headers: ReadonlyMap<string, string>): boolean {
  return MAIL_SYSTEM.test(headers.get('from') ?? '');
}

/** Where a bounce's text starts quoting the returned message: the analysis stops there. */
const RETURNED_MESSAGE =
  /^.*(-{3,}\s*(original message|below this line|this is a copy|the original message|returned message|original message headers)|original message headers:|^return-path:|^received: from).*$/im;

const FAILURE_TEXT =
  /(undeliver|could not be delivered|couldn't be delivered|wasn't delivered|was not delivered|delivery (has )?failed|delivery to the following recipient(s)? failed|permanent(ly)? (fatal )?error|failed permanently|returned mail|mail delivery (failed|failure|subsystem)|unable to deliver|message not delivered|non-?delivery|the following address(es)? failed|qmail-send program|could not deliver|delivery status notification \(failure\)|failed recipient|user unknown|no such user)/i;

const DELAY_TEXT =
  /(delivery status notification \(delay\)|delivery delayed|delayed mail|message (delivery )?(has been |is )?delayed|has not (yet )?been delivered|could not send message for (the )?past|will (continue|keep) (to )?try|will retry|will be retried|still trying|warning message only|delivery incomplete)/i;

/** An SMTP reply quoted in a bounce's text, with or without an enhanced code. */
const QUOTED_REPLY = /\b([45]\d\d)(?:[ \t]*[-:]?[ \t]*#?)([245]\.\d{1,3}\.\d{1,3})?[ \t:]+([^\n]*)/;
const QMAIL_CODE = /\(#([245]\.\d{1,3}\.\d{1,3})\)/;
const ADDRESS = /[A-Za-z0-9._%+'=-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;
const NOT_A_RECIPIENT = /^(mailer-daemon|postmaster|bounce\+|bounces?@|no-?reply)/i;

/** A bounce without machine-readable fields, by what its text says. */
function textReport(mail: MailParts): InboundReport {
  const subject = mail.headers.get('subject') ?? '';
  const cut = RETURNED_MESSAGE.exec(mail.text);
  const text = cut ? mail.text.slice(0, cut.index) : mail.text;
  const said = `${subject}\n${text}`;
  const failure = FAILURE_TEXT.test(said);
  const own = new Set(
    [mail.headers.get('from'), mail.headers.get('to')].map((value) => bareAddress(value)),
  );
  const recipient =
    [...text.matchAll(ADDRESS)]
      .map((match) => match[0].toLowerCase())
      .find((address) => !NOT_A_RECIPIENT.test(address) && !own.has(address)) ?? null;
  if (DELAY_TEXT.test(said) && !/permanent|fatal/i.test(said)) {
    return { kind: 'delayed', recipients: recipient ? [recipient] : [] };
  }
  if (!failure) return { kind: 'not_a_report', reason: 'no failure or delay in the text' };
  const reply = quotedReply(text);
  return {
    kind: 'bounce',
    reportingMta: null,
    recipients: [{ recipient, classification: classifyBounce(reply), reply, remoteMta: null }],
  };
}

/** The first SMTP reply (or qmail's `(#5.x.x)`) the text quotes; else its text as a 554. */
function quotedReply(text: string): SmtpReply {
  const quoted = QUOTED_REPLY.exec(text);
  if (quoted?.[1]) {
    return { code: Number(quoted[1]), enhanced: quoted[2] ?? null, text: quoted[3]?.trim() ?? '' };
  }
  const qmail = QMAIL_CODE.exec(text);
  const line = qmail ? (text.slice(0, qmail.index).split('\n').pop()?.trim() ?? '') : '';
  if (qmail?.[1])
    return { code: qmail[1].startsWith('4') ? 450 : 554, enhanced: qmail[1], text: line };
  return { code: 554, enhanced: null, text: text.replace(/\s+/g, ' ').trim().slice(0, 500) };
}
