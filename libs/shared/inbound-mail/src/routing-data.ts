import type {
  MessageRoutingData,
  RouteOptions,
  RoutingAttachmentRecord,
} from '@envoi/contracts-routes';

import { isBounce } from './bounce';
import type {
  MailboxAddress,
  ParsedAttachment,
  ParsedInboundMessage,
} from './parsed-inbound-message';
import { headerValue } from './parsed-inbound-message';
import { assessSpam } from './spam-score';
import { stripReply } from './strip-reply';

/** What the MX knows of a message beyond its bytes. */
export interface InboundEnvelope {
  /** The inbound message id (`data.id`). */
  id: string;
  /** The raw message size in bytes. */
  size: number;
  /** The envelope recipient this payload is for; the To header's addresses when absent. */
  recipient?: string;
  /** MAIL FROM without `<>`; `""` for the null reverse-path of a bounce. */
  sender?: string;
}

function formatMailbox(mailbox: MailboxAddress): string {
  if (!mailbox.name) return mailbox.address;
  const name = /[",:;<>@[\]\\]/.test(mailbox.name)
    ? `"${mailbox.name.replace(/(["\\])/g, '\\$1')}"`
    : mailbox.name;
  return `${name} <${mailbox.address}>`;
}

function addresses(mailboxes: MailboxAddress[]): string {
  return mailboxes.map((mailbox) => mailbox.address).join(', ');
}

function percentDecoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** Content-ID without `<>`, percent-decoded: `<a+b%40x>` is `a b@x` (webhooks.yaml). */
export function routingContentId(contentId: string): string {
  return percentDecoded(contentId.trim().replace(/^<|>$/g, '').trim());
}

/** The disposition type, lowercased, without parameters, or `""`. */
export function routingDisposition(disposition: string): string {
  return (disposition.split(';')[0] ?? '').trim().toLowerCase();
}

function attachmentRecord(attachment: ParsedAttachment): RoutingAttachmentRecord {
  return {
    filename: attachment.filename,
    content_type: attachment.contentType,
    content_id: routingContentId(attachment.contentId),
    disposition: routingDisposition(attachment.disposition),
    data: attachment.content.toString('base64'),
  };
}

/**
 * The header block as a `Name: value` map. A name keeps its first spelling; a repeated field
 * (Received, Authentication-Results, …) has its values joined with `\n`, in message order.
 */
export function routingHeaders(
  message: Pick<ParsedInboundMessage, 'headers'>,
): Record<string, string> {
  const byName = new Map<string, { name: string; values: string[] }>();
  for (const field of message.headers) {
    const key = field.name.toLowerCase();
    const entry = byName.get(key) ?? { name: field.name, values: [] };
    entry.values.push(field.value);
    byName.set(key, entry);
  }
  return Object.fromEntries(
    [...byName.values()].map((entry) => [entry.name, entry.values.join('\n')]),
  );
}

/**
 * The `data` of a `message.routing` payload (notes 2.8, webhooks.yaml). Every key the schema
 * requires is present: `attachments` is `[]` and `reply_from_plain_body` `""` while their route
 * flags are off; `headers` appears only with the `headers` flag.
 */
export function routingData(
  message: ParsedInboundMessage,
  envelope: InboundEnvelope,
  options: RouteOptions,
): MessageRoutingData {
  const replyTo = message.replyTo.length > 0 ? message.replyTo : message.from;
  const data: MessageRoutingData = {
    id: envelope.id,
    from: message.from.map(formatMailbox).join(', '),
    reply_to: addresses(replyTo),
    to: envelope.recipient ?? addresses(message.to),
    subject: message.subject,
    message_id: headerValue(message, 'Message-ID'),
    size: envelope.size,
    spam_score: assessSpam(message).score,
    bounce: isBounce(message, envelope.sender),
    cc: addresses(message.cc),
    date: headerValue(message, 'Date'),
    in_reply_to: headerValue(message, 'In-Reply-To'),
    references: headerValue(message, 'References'),
    auto_submitted: headerValue(message, 'Auto-Submitted'),
    html_body: message.html,
    plain_body: message.text,
    reply_from_plain_body: options.strip_replies ? stripReply(message.text) : '',
    attachments: options.attachments ? message.attachments.map(attachmentRecord) : [],
  };
  if (options.headers) data.headers = routingHeaders(message);
  return data;
}
