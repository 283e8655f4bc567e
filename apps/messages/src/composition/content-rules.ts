import type {
  AddressBody,
  AttachmentBody,
  CreateConversationBody,
  CreateMessageBody,
  SendOptionsBody,
} from '@envoi/contracts-messages';
import { HEADERS_MAX } from '@envoi/contracts-messages';
import {
  attachmentBytes,
  ContentRuleError,
  CR_LF_NUL,
  hasOverlongLine,
  inlineContentId,
  isMessageType,
  isReservedHeader,
  isTraceHeader,
  MAX_LINE_OCTETS,
  unsafeHeaderText,
} from '@envoi/shared-composition';

/** RFC 5322 field name: printable ASCII except the colon; a name cannot be folded. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]{1,996}$/;
/** `type/subtype` with optional parameters (RFC 2045 tokens). */
const MIME_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+\s*(;.*)?$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

type Kind = 'message' | 'conversation';

/**
 * Checks the content rules of spec 4.2 (1, 4, 5, 7) and makes header injection impossible.
 * Throws {@link ContentRuleError} on the first violation. Field-level validation (types, lengths,
 * email format) is the contract classes' job and has run before.
 */
export function checkContentRules(body: SendOptionsBody, kind: Kind): void {
  if (!body.text_content && !body.html_content) {
    throw new ContentRuleError('text_content or html_content must be non-empty');
  }
  checkHeaderText('subject', body.subject);
  checkAddress('from', body.from);
  if (body.reply_to) checkAddress('reply_to', body.reply_to);
  for (const [field, addresses] of addressLists(body, kind)) {
    addresses.forEach((address, i) => checkAddress(`${field}[${i}]`, address));
  }
  checkHeaders(body, kind);
  (body.attachments ?? []).forEach((attachment, i) =>
    checkAttachment(`attachments[${i}]`, attachment),
  );
}

/** The custom headers to write: everything but `message-id` (any case), names' case kept. */
export function customHeaders(body: SendOptionsBody): Record<string, string> {
  return Object.fromEntries(
    Object.entries(body.headers ?? {}).filter(([name]) => name.toLowerCase() !== 'message-id'),
  );
}

function checkHeaderText(field: string, value: string): void {
  const problem = unsafeHeaderText(value);
  if (problem) throw new ContentRuleError(`${field} ${problem}`);
}

function checkAddress(field: string, address: AddressBody): void {
  checkHeaderText(`${field}.email`, address.email);
  if (address.name !== undefined) checkHeaderText(`${field}.name`, address.name);
}

function addressLists(body: SendOptionsBody, kind: Kind): [string, AddressBody[]][] {
  if (kind === 'message') {
    return [['recipients', (body as Partial<CreateMessageBody>).recipients ?? []]];
  }
  const conversation = body as Partial<CreateConversationBody>;
  return [
    ['to', conversation.to ?? []],
    ['cc', conversation.cc ?? []],
    ['bcc', conversation.bcc ?? []],
  ];
}

function checkHeaders(body: SendOptionsBody, kind: Kind): void {
  const entries = Object.entries(body.headers ?? {});
  if (entries.length > HEADERS_MAX) {
    throw new ContentRuleError(`at most ${HEADERS_MAX} headers are allowed`);
  }
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    // JSON.stringify shows a CR or LF in the name as \r or \n instead of breaking the message.
    const shown = JSON.stringify(name);
    if (CR_LF_NUL.test(name)) {
      throw new ContentRuleError(`header name ${shown} must not contain CR, LF or NUL`);
    }
    if (!FIELD_NAME.test(name)) {
      throw new ContentRuleError(
        `header name ${shown} is invalid: use printable ASCII without spaces or colons`,
      );
    }
    const lower = name.toLowerCase();
    if (seen.has(lower)) {
      throw new ContentRuleError(
        `header ${shown} is given more than once (header names are case-insensitive)`,
      );
    }
    seen.add(lower);
    checkHeaderText(`header ${shown}`, value);
    if (lower === 'reply-to' && body.reply_to) {
      throw new ContentRuleError('reply_to and a reply-to header cannot both be given');
    }
    if (isReservedHeader(lower)) {
      throw new ContentRuleError(
        `header ${shown} cannot be given: ${reservedReason(lower, body, kind)}`,
      );
    }
  }
}

function reservedReason(lower: string, body: SendOptionsBody, kind: Kind): string {
  switch (lower) {
    case 'from':
      return 'use the from field';
    case 'subject':
      return 'use the subject field';
    case 'to':
      return kind === 'message' ? 'each recipient gets a To header of its own' : 'use the to field';
    case 'cc':
    case 'bcc': {
      if (kind === 'message') return 'CC and BCC need the conversation endpoint';
      const conversation = body as Partial<CreateConversationBody>;
      const given = lower === 'cc' ? conversation.cc : conversation.bcc;
      return given
        ? `${lower} and a ${lower} header cannot both be given`
        : `use the ${lower} field`;
    }
    default:
      return isTraceHeader(lower)
        ? 'only the mail servers that handle the message add trace and authentication headers'
        : 'Envoi sets it';
  }
}

function checkAttachment(field: string, attachment: AttachmentBody): void {
  checkHeaderText(`${field}.file_name`, attachment.file_name);
  checkHeaderText(`${field}.content_type`, attachment.content_type);
  if (!MIME_TYPE.test(attachment.content_type)) {
    throw new ContentRuleError(`${field}.content_type must be a MIME type such as application/pdf`);
  }
  if (/^multipart\//i.test(attachment.content_type)) {
    throw new ContentRuleError(`${field}.content_type cannot be multipart`);
  }
  if (attachment.content_disposition !== undefined) {
    checkHeaderText(`${field}.content_disposition`, attachment.content_disposition);
    if (!/^(inline|attachment)$/i.test(attachment.content_disposition)) {
      throw new ContentRuleError(`${field}.content_disposition must be inline or attachment`);
    }
  }
  if (attachment.content_id !== undefined) {
    checkHeaderText(`${field}.content_id`, attachment.content_id);
    const inline = inlineContentId(attachment.content_id);
    if (inline !== undefined && !/^[^<>\s]+$/.test(inline)) {
      throw new ContentRuleError(
        `${field}.content_id of an inline attachment must have the form <name@host>`,
      );
    }
  }
  if (attachment.base64 && !isBase64(attachment.data)) {
    throw new ContentRuleError(`${field}.data is not valid base64`);
  }
  // A message/* part cannot be base64- or quoted-printable-encoded (RFC 2046 5.2.1), so its lines
  // reach the wire as they are. Rather than break the line limit (RFC 5322 2.1.1), or encode it
  // anyway and have receivers that follow the RFC misread it, such an attachment is refused; the
  // same bytes as application/octet-stream are base64-encoded and arrive intact.
  if (isMessageType(attachment.content_type) && hasOverlongLine(attachmentBytes(attachment))) {
    throw new ContentRuleError(
      `${field} has a line longer than ${MAX_LINE_OCTETS} octets, which a message/* attachment cannot carry (it is sent unencoded); send it as application/octet-stream instead`,
    );
  }
}

/** Standard alphabet; whitespace ignored; padding optional but never misplaced. */
function isBase64(data: string): boolean {
  const compact = data.replace(/\s+/g, '');
  if (!BASE64.test(compact)) return false;
  const padded = compact.endsWith('=');
  return padded ? compact.length % 4 === 0 : compact.length % 4 !== 1;
}
