import type { AttachmentBody } from '@envoi/contracts-messages';

import type { HtmlTracker, TrackingChoice } from './html-tracker';
import type { TrackedLink } from './html-tracking';
import { type ComposeAddress, type ComposeInput, composeMime } from './mime';
import { type TrackedRaw, trackRawMime } from './raw-mime-tracking';
import { mergeSubstitutions, type MessageTemplates, renderTemplates } from './templates';

export type MessageKind = 'message' | 'conversation';

/** What every message of a send shares, as stored once at accept (messages.sends). */
export interface SendSources {
  kind: MessageKind;
  /** The Date header. */
  acceptedAt: Date;
  from: ComposeAddress;
  replyTo?: ComposeAddress;
  /** A conversation's To and Cc; a send's message is addressed to its own recipient. */
  to?: ComposeAddress[];
  cc?: ComposeAddress[];
  /** Templates when `templated`, otherwise the content as it is sent. */
  templates: MessageTemplates;
  headers: Record<string, string>;
  /** The global substitutions. */
  substitutions?: Record<string, unknown>;
  templated: boolean;
  attachments: AttachmentBody[];
}

/** What one message adds to its send's sources. */
export interface RecipientPart {
  id: string;
  messageIdHeader: string;
  /** A send's recipient (its To); unused for a conversation. */
  recipient: ComposeAddress;
  /** The recipient's own substitutions. */
  substitutions?: Record<string, unknown>;
  tracking: TrackingChoice;
}

/** A message ready to be composed, and the links its HTML tracks clicks of. */
export interface PreparedMessage {
  input: ComposeInput;
  links: TrackedLink[];
}

/** The message's subject and contents: its send's templates rendered for its recipient. */
export function renderFor(send: SendSources, part: RecipientPart): MessageTemplates {
  if (!send.templated) return send.templates;
  return renderTemplates(
    send.templates,
    mergeSubstitutions(send.substitutions, part.substitutions),
    { always: true },
  );
}

/**
 * Composes the messages of stored sends, the same way at accept (sizes, links), whenever a
 * message is read (messages) and when it is delivered (delivery): the sources, the recipient's
 * part and the tracking secret decide every byte (composeMime is deterministic, tracking tokens
 * are HMACs), so every read gives exactly the bytes that are sent.
 */
export class StoredComposer {
  constructor(private readonly tracker: HtmlTracker) {}

  /** The message's compose input; `rendered` when its templates were rendered already. */
  prepare(send: SendSources, part: RecipientPart, rendered?: MessageTemplates): PreparedMessage {
    const content = rendered ?? renderFor(send, part);
    const tracked =
      content.html === undefined
        ? undefined
        : this.tracker.track(content.html, part.id, part.tracking);
    const input: ComposeInput = {
      messageId: part.messageIdHeader,
      date: send.acceptedAt,
      from: send.from,
      to: send.kind === 'conversation' ? (send.to ?? []) : [part.recipient],
      ...(send.kind === 'conversation' && send.cc?.length ? { cc: send.cc } : {}),
      ...(send.replyTo ? { replyTo: send.replyTo } : {}),
      subject: content.subject,
      ...(content.text !== undefined ? { text: content.text } : {}),
      ...(tracked ? { html: tracked.html } : {}),
      ...(content.amp !== undefined ? { amp: content.amp } : {}),
      attachments: send.attachments,
      headers: send.headers,
    };
    return { input, links: tracked?.links ?? [] };
  }

  /** The message's raw bytes. */
  compose(send: SendSources, part: RecipientPart): Promise<Buffer> {
    return composeMime(this.prepare(send, part).input);
  }

  /** A message submitted as `raw` (over SMTP), with the tracking of message `messageId`. */
  trackSubmitted(raw: Buffer, messageId: string, tracking: TrackingChoice): TrackedRaw {
    return trackRawMime(raw, this.tracker, messageId, tracking);
  }
}
