import { type RecipientPart, StoredComposer } from '@envoi/shared-composition';
import { Injectable } from '@nestjs/common';

import type { MessageEntity } from './message.entity';
import { MessagesRepository } from './messages.repository';
import { type SendContent, SendsRepository } from './sends.repository';

/** What the message adds to its send's sources. */
export function recipientPartOf(
  message: Pick<
    MessageEntity,
    | 'id'
    | 'messageIdHeader'
    | 'recipient'
    | 'recipientName'
    | 'substitutions'
    | 'trackOpens'
    | 'trackClicks'
  >,
): RecipientPart {
  return {
    id: message.id,
    messageIdHeader: message.messageIdHeader,
    recipient: {
      email: message.recipient,
      ...(message.recipientName !== null ? { name: message.recipientName } : {}),
    },
    ...(message.substitutions !== null ? { substitutions: message.substitutions } : {}),
    tracking: { opens: message.trackOpens, clicks: message.trackClicks },
  };
}

/**
 * A message's raw content, exactly as it is (or was) sent: composed from its send and its own
 * part, its send's raw bytes with its tracking when submitted over SMTP, or, for a message stored
 * before sends were, read as stored. Null once data retention purged it (its send's content, or
 * this message's alone).
 */
@Injectable()
export class MessageContents {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly sends: SendsRepository,
    private readonly composer: StoredComposer,
  ) {}

  /** `sendContents`: the sends already read, by id, for a caller reading many messages. */
  async raw(
    message: MessageEntity,
    sendContents: Map<string, Promise<SendContent | undefined>> = new Map(),
  ): Promise<Buffer | null> {
    const content = await this.content(message, sendContents);
    if (!content?.submitted) return content?.raw ?? null;
    // As the delivery worker sends it: with the message's own tracking.
    const tracking = { opens: message.trackOpens, clicks: message.trackClicks };
    return this.composer.trackSubmitted(content.raw, message.id, tracking).raw;
  }

  /**
   * The message's raw content, and whether it is a message submitted over SMTP: then without its
   * tracking, which the delivery worker adds (and {@link raw}).
   */
  async content(
    message: MessageEntity,
    sendContents: Map<string, Promise<SendContent | undefined>> = new Map(),
  ): Promise<{ raw: Buffer; submitted: boolean } | null> {
    const sendId = message.sendId;
    if (sendId === null) {
      const raw = await this.messages.findRaw(message.id);
      return raw && { raw, submitted: false };
    }
    if (message.contentPurgedAt !== null) return null;
    let read = sendContents.get(sendId);
    if (!read) {
      read = this.sends.findContent(sendId);
      sendContents.set(sendId, read);
    }
    const content = await read;
    if (!content) return null;
    // A send submitted over SMTP: every message is its raw bytes.
    if (Buffer.isBuffer(content)) return { raw: content, submitted: true };
    return {
      raw: await this.composer.compose(content, recipientPartOf(message)),
      submitted: false,
    };
  }
}
