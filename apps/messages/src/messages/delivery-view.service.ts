import { randomUUID } from 'node:crypto';

import {
  type DeliveryView,
  type DeliveryViewRequest,
  type DeliveryViews,
  type DeliveryViewsRequest,
  type DeliveryViewsV2,
  INLINE_PAYLOAD_MAX_BYTES,
  MESSAGE_DOWNLOADS_BUCKET,
  type StoredObjectRecord,
} from '@envoi/contracts-messages';
import { NATS_CONNECTION, putUpload } from '@envoi/shared-nats';
import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from 'nats';

import { MessagesConfig } from '../messages.config';
import { type DeliveryMessage, DeliveryViewReads } from './delivery-view-reads';
import { base64Length, deliveryViewsReply, SUBMITTED_FIELD_BYTES } from './delivery-views-reply';
import { MessageContents } from './message-contents.service';
import { MessagesException } from './messages.exception';
import { MessagesRepository } from './messages.repository';
import type { SendContent } from './sends.repository';

/** What `,"content_base64":""` adds to a view's JSON around the content itself. */
const CONTENT_FIELD_BYTES = 20;

/** Whether raw content of `size` bytes travels inline in the reply (as base64). */
export function fitsInline(size: number): boolean {
  return base64Length(size) <= INLINE_PAYLOAD_MAX_BYTES;
}

/** The view without its content. */
export function toDeliveryView(message: DeliveryMessage): DeliveryView {
  return {
    id: message.id,
    message_id_header: message.messageIdHeader,
    account_id: message.accountId,
    domain_id: message.domainId,
    domain: message.domain,
    sender: message.sender,
    subject: message.subject,
    // Accept stores exactly where it goes: the one recipient of a send, every to/cc/bcc address
    // of a conversation that is not suppressed (lowercase, without duplicates).
    envelope_recipients: message.envelopeRecipients,
    status: message.status,
    sandbox: message.sandbox,
    sandbox_result: message.sandboxResult,
    first_attempt_at: message.firstAttemptAt?.toISOString() ?? null,
    expires_at: message.expiresAt?.toISOString() ?? null,
    tracking: { open: message.trackOpens, click: message.trackClicks },
  };
}

/**
 * What a delivery worker needs to attempt one message (MessagesSubjects.deliveryView): its
 * envelope, its state and its exact bytes (composed from its send, the same on every call), inline while their base64 form fits a NATS reply,
 * otherwise through the downloads bucket.
 */
@Injectable()
export class DeliveryViewService {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly contents: MessageContents,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: MessagesConfig,
    private readonly reads: DeliveryViewReads,
  ) {}

  async view(request: DeliveryViewRequest): Promise<DeliveryView> {
    const message = await this.messages.findById(request.message_id);
    if (!message) throw MessagesException.notFound();
    const content = await this.contents.content(message);
    // Purged by data retention: nothing left to send.
    if (content === null) return toDeliveryView(message);
    const { raw, submitted } = content;
    const view = { ...toDeliveryView(message), ...(submitted ? { submitted } : {}) };
    if (fitsInline(raw.length)) return { ...view, content_base64: raw.toString('base64') };
    return { ...view, content_download: await this.download(`${message.id}.raw`, raw) };
  }

  /**
   * The views of a job's messages and their sends' sources, each send read once
   * (MessagesSubjects.deliveryViewsV2): the worker composes each message itself.
   */
  async viewsWithSources(request: DeliveryViewsRequest): Promise<DeliveryViewsV2> {
    const messages = await this.reads.messages(request.message_ids);
    return deliveryViewsReply(messages, messages.map(toDeliveryView), {
      content: (sendId) => this.reads.sendContent(sendId),
      raw: (messageId) => this.messages.findRaw(messageId),
      upload: (sendId, bytes) => this.download(`${sendId}.sources`, bytes),
    });
  }

  /**
   * The views of a job's messages in one reply (MessagesSubjects.deliveryViews), each send read
   * once: contents inline, in order, while the reply stays within INLINE_PAYLOAD_MAX_BYTES; the
   * first that does not fit and those after it are left to deliveryView, one by one (so that this
   * call composes at most one content it does not return, and stores nothing in the bucket).
   */
  async views(request: DeliveryViewsRequest): Promise<DeliveryViews> {
    const messages = await this.messages.findByIds(request.message_ids);
    const bare = messages.map(toDeliveryView);
    const ids = messages.map((message) => message.id);
    // Room left with every view bare and every id listed as separate, the most either takes.
    let room =
      INLINE_PAYLOAD_MAX_BYTES -
      Buffer.byteLength(JSON.stringify({ views: bare, separately: ids }));
    const sendContents = new Map<string, Promise<SendContent | undefined>>();
    const views: DeliveryView[] = [];
    for (const [index, message] of messages.entries()) {
      const content = await this.contents.content(message, sendContents);
      const view = bare[index] ?? toDeliveryView(message);
      if (content === null) {
        views.push(view);
        continue;
      }
      const { raw, submitted } = content;
      const inlineBytes =
        base64Length(raw.length) + CONTENT_FIELD_BYTES + (submitted ? SUBMITTED_FIELD_BYTES : 0);
      if (inlineBytes > room) return { views, separately: ids.slice(index) };
      room -= inlineBytes;
      views.push({
        ...view,
        ...(submitted ? { submitted } : {}),
        content_base64: raw.toString('base64'),
      });
    }
    return { views, separately: [] };
  }

  /** Stores `bytes` in the downloads bucket under a fresh name starting with `prefix`. */
  private download(prefix: string, bytes: Buffer): Promise<StoredObjectRecord> {
    return putUpload(
      this.connection,
      MESSAGE_DOWNLOADS_BUCKET,
      `${prefix}.${randomUUID()}`,
      bytes,
      this.config.UPLOAD_TTL_MS,
    );
  }
}
