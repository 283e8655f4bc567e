import type {
  DeliveryView,
  RecipientPartRecord,
  SendSourcesRecord,
} from '@envoi/contracts-messages';

import type { RecipientPart, SendSources } from './stored-composition';

/** A send's sources as they travel (DeliverySendRecord): every field, the Date as RFC 3339. */
export function toSourcesRecord(sources: SendSources): SendSourcesRecord {
  return {
    kind: sources.kind,
    accepted_at: sources.acceptedAt.toISOString(),
    from: sources.from,
    ...(sources.replyTo ? { reply_to: sources.replyTo } : {}),
    ...(sources.to ? { to: sources.to } : {}),
    ...(sources.cc ? { cc: sources.cc } : {}),
    templates: sources.templates,
    headers: sources.headers,
    ...(sources.substitutions ? { substitutions: sources.substitutions } : {}),
    templated: sources.templated,
    attachments: sources.attachments,
  };
}

/** The sources a record carries, as composition takes them. */
export function fromSourcesRecord(record: SendSourcesRecord): SendSources {
  return {
    kind: record.kind,
    acceptedAt: new Date(record.accepted_at),
    from: record.from,
    ...(record.reply_to ? { replyTo: record.reply_to } : {}),
    ...(record.to ? { to: record.to } : {}),
    ...(record.cc ? { cc: record.cc } : {}),
    templates: record.templates,
    headers: record.headers,
    ...(record.substitutions ? { substitutions: record.substitutions } : {}),
    templated: record.templated,
    attachments: record.attachments,
  };
}

/** What a message of send `sendId` adds to its sources, as it travels in its view. */
export function toRecipientPartRecord(sendId: string, part: RecipientPart): RecipientPartRecord {
  return {
    send_id: sendId,
    recipient: part.recipient,
    ...(part.substitutions ? { substitutions: part.substitutions } : {}),
  };
}

/** The recipient part of a view's message: its composition record and the view's own fields. */
export function recipientPartOfView(
  view: DeliveryView,
  record: RecipientPartRecord,
): RecipientPart {
  return {
    id: view.id,
    messageIdHeader: view.message_id_header,
    recipient: record.recipient,
    ...(record.substitutions ? { substitutions: record.substitutions } : {}),
    tracking: { opens: view.tracking.open, clicks: view.tracking.click },
  };
}
