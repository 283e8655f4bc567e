import type { MessageRoutingData, RouteOptions } from '@envoi/contracts-routes';
import { type AddressObject, type ParsedMail, simpleParser } from 'mailparser';

/** The options of a route that shape its payload's data. */
export type RoutingDataOptions = Pick<RouteOptions, 'attachments' | 'headers' | 'strip_replies'>;

function addressText(value: AddressObject | AddressObject[] | undefined): string {
  if (value === undefined) return '';
  return (Array.isArray(value) ? value : [value]).map((address) => address.text).join(', ');
}

function firstAddress(value: AddressObject | AddressObject[] | undefined): string {
  const [object] = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return object?.value[0]?.address ?? '';
}

function headerText(mail: ParsedMail, name: string): string {
  const line = mail.headerLines.find((header) => header.key === name);
  return line ? line.line.slice(line.line.indexOf(':') + 1).trim() : '';
}

function contentId(raw: string | undefined): string {
  if (raw === undefined) return '';
  const bare = raw.replace(/^<|>$/g, '');
  try {
    return decodeURIComponent(bare);
  } catch {
    return bare;
  }
}

/**
 * The `data` of a message.routing payload for the raw message (notes 2.8, webhooks.yaml): the
 * `attachments` (inline cid parts included; `[]` unless the route asks for them), `headers` only
 * when it asks for them, `reply_from_plain_body` (`""` unless it strips replies). `to` is the To
 * header; the delivery sets the recipient's address for a per-recipient call. Interim: the reply
 * is not stripped yet (the whole plain body) and `spam_score` is 0 until the inbound-mail
 * library (libs/shared/inbound-mail) replaces this parse.
 */
export async function routingData(
  id: string,
  raw: Buffer,
  options: RoutingDataOptions,
): Promise<MessageRoutingData> {
  const mail = await simpleParser(raw, { skipTextToHtml: true, skipImageLinks: true });
  const plainBody = mail.text ?? '';
  const autoSubmitted = headerText(mail, 'auto-submitted');
  return {
    id,
    from: addressText(mail.from),
    reply_to: firstAddress(mail.replyTo) || firstAddress(mail.from),
    to: firstAddress(mail.to),
    subject: mail.subject ?? '',
    message_id: mail.messageId ?? '',
    size: raw.length,
    spam_score: 0,
    bounce: headerText(mail, 'content-type').toLowerCase().includes('report-type=delivery-status'),
    cc: addressText(mail.cc),
    date: headerText(mail, 'date'),
    in_reply_to: mail.inReplyTo ?? '',
    references: Array.isArray(mail.references)
      ? mail.references.join(' ')
      : (mail.references ?? ''),
    auto_submitted: autoSubmitted,
    html_body: typeof mail.html === 'string' ? mail.html : '',
    plain_body: plainBody,
    reply_from_plain_body: options.strip_replies ? plainBody : '',
    attachments: options.attachments
      ? mail.attachments.map((attachment) => ({
          filename: attachment.filename ?? '',
          content_type: attachment.contentType,
          content_id: contentId(attachment.contentId),
          disposition: (attachment.contentDisposition ?? '').toLowerCase(),
          data: attachment.content.toString('base64'),
        }))
      : [],
    ...(options.headers
      ? {
          headers: Object.fromEntries(
            mail.headerLines.map((header) => [
              header.line.slice(0, header.line.indexOf(':')),
              header.line.slice(header.line.indexOf(':') + 1).trim(),
            ]),
          ),
        }
      : {}),
  };
}
