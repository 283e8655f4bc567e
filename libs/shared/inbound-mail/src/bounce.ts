import type { ParsedInboundMessage } from './parsed-inbound-message';
import { headerValue } from './parsed-inbound-message';

type BounceInput = Pick<ParsedInboundMessage, 'headers' | 'from' | 'subject' | 'contentType'>;

const MAILER_DAEMON = /^(mailer-daemon|postmaster)@/i;
const BOUNCE_SUBJECT =
  /^(undeliver(ed|able)|delivery (status notification|failure|has failed)|returned mail|mail delivery (failed|subsystem)|failure notice|non[- ]?delivery)/i;

/** The envelope sender is the null reverse-path `<>` (RFC 5321 4.5.5), from MAIL FROM or Return-Path. */
function hasNullSender(message: BounceInput, envelopeSender: string | undefined): boolean {
  if (envelopeSender !== undefined) return envelopeSender.replace(/[<>\s]/g, '') === '';
  return headerValue(message, 'Return-Path').replace(/\s/g, '') === '<>';
}

/**
 * Whether a message is a non-delivery report: a null reverse-path, a `multipart/report` of a
 * delivery status (RFC 3464), or a mailer-daemon/postmaster message with a bounce subject.
 * Autoreplies (`Auto-Submitted: auto-replied`, vacation notices) are not bounces: they reach the
 * route with `bounce: false` and their `auto_submitted` value.
 */
export function isBounce(message: BounceInput, envelopeSender?: string): boolean {
  if (hasNullSender(message, envelopeSender)) return true;
  if (message.contentType.startsWith('multipart/report')) {
    const contentType = headerValue(message, 'Content-Type');
    const reportType = /report-type\s*=\s*"?([\w-]+)/i.exec(contentType)?.[1]?.toLowerCase();
    return reportType === undefined || reportType === 'delivery-status';
  }
  const sender = message.from[0]?.address ?? '';
  return MAILER_DAEMON.test(sender) && BOUNCE_SUBJECT.test(message.subject.trim());
}
