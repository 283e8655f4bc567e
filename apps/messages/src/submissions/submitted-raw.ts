import { controlFields } from './control-headers';
import { fieldsNamed, type HeaderBlock, withFieldsOnTop, withoutFields } from './header-block';

/** The date as RFC 5322 writes it (`Wed, 25 Nov 2026 10:00:00 +0000`). */
export function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, '+0000');
}

/** The domain of a Message-ID (`<left@domain>`), lowercase; undefined when it has none. */
export function messageIdDomain(value: string): string | undefined {
  const match = /^<[^<>@\s]+@([^<>@\s]+)>$/.exec(value.trim());
  return match?.[1]?.toLowerCase();
}

/** The header fields the platform adds to a submitted message: Message-ID and Date when missing. */
export interface AddedFields {
  /** Set when the client's Message-ID is missing or not on the sender's domain (it is replaced). */
  messageIdHeader?: string;
  /** Set when the message has no Date. */
  date?: Date;
}

/**
 * The bytes stored and delivered: the client's message without its control headers (platform
 * notes 3.2) and, when the platform sets its own, without its Message-ID, with the added fields
 * at the top of the header block. Every other byte is kept.
 */
export function submittedRaw(raw: Buffer, block: HeaderBlock, added: AddedFields): Buffer {
  const removed = [
    ...controlFields(block),
    ...(added.messageIdHeader !== undefined ? fieldsNamed(block, 'message-id') : []),
  ];
  const lines = [
    ...(added.messageIdHeader !== undefined ? [`Message-ID: ${added.messageIdHeader}`] : []),
    ...(added.date !== undefined ? [`Date: ${rfc5322Date(added.date)}`] : []),
  ];
  return withFieldsOnTop(withoutFields(raw, removed), lines, block.eol);
}
