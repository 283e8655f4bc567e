import { randomUUID } from 'node:crypto';

import {
  type DeliveryView,
  type DeliveryViewRequest,
  type DeliveryViews,
  type DeliveryViewsRequest,
  INLINE_PAYLOAD_MAX_BYTES,
  MESSAGE_DOWNLOADS_BUCKET,
} from '@envoi/contracts-messages';
import { NATS_CONNECTION, putUpload } from '@envoi/shared-nats';
import { Inject, Injectable } from '@nestjs/common';
import type { NatsConnection } from 'nats';

import { MessagesConfig } from '../messages.config';
import type { MessageEntity } from './message.entity';
import { MessageContents } from './message-contents.service';
import { MessagesException } from './messages.exception';
import { MessagesRepository } from './messages.repository';
import type { SendSources } from './stored-composition';

/** What `,"content_base64":""` adds to a view's JSON around the content itself. */
const CONTENT_FIELD_BYTES = 20;

/** Bytes of the base64 form of `size` bytes. */
export function base64Length(size: number): number {
  return 4 * Math.ceil(size / 3);
}

/** Whether raw content of `size` bytes travels inline in the reply (as base64). */
export function fitsInline(size: number): boolean {
  return base64Length(size) <= INLINE_PAYLOAD_MAX_BYTES;
}

/** The view without its content. */
export function toDeliveryView(message: MessageEntity): DeliveryView {
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
  ) {}

  async view(request: DeliveryViewRequest): Promise<DeliveryView> {
    const message = await this.messages.findById(request.message_id);
    if (!message) throw MessagesException.notFound();
    const raw = await this.contents.raw(message);
    return this.carrying(toDeliveryView(message), raw, raw !== null && fitsInline(raw.length));
  }

  /**
   * The views of a job's messages in one reply (MessagesSubjects.deliveryViews): each send read
   * once; contents inline, in order, while the whole reply stays within INLINE_PAYLOAD_MAX_BYTES,
   * the others through the downloads bucket (composed and stored one at a time, so that only the
   * inline ones are held together).
   */
  async views(request: DeliveryViewsRequest): Promise<DeliveryViews> {
    const messages = await this.messages.findByIds(request.message_ids);
    const bare = messages.map(toDeliveryView);
    let room = INLINE_PAYLOAD_MAX_BYTES - Buffer.byteLength(JSON.stringify({ views: bare }));
    const sendSources = new Map<string, Promise<SendSources | undefined>>();
    const views: DeliveryView[] = [];
    for (const [index, message] of messages.entries()) {
      const raw = await this.contents.raw(message, sendSources);
      const inlineBytes = raw === null ? 0 : base64Length(raw.length) + CONTENT_FIELD_BYTES;
      const inline = raw !== null && inlineBytes <= room;
      if (inline) room -= inlineBytes;
      views.push(await this.carrying(bare[index] ?? toDeliveryView(message), raw, inline));
    }
    return { views };
  }

  /** The view with its content, inline or stored in the downloads bucket; none once purged. */
  private async carrying(
    view: DeliveryView,
    raw: Buffer | null,
    inline: boolean,
  ): Promise<DeliveryView> {
    if (raw === null) return view;
    if (inline) return { ...view, content_base64: raw.toString('base64') };
    const download = await putUpload(
      this.connection,
      MESSAGE_DOWNLOADS_BUCKET,
      `${view.id}.raw.${randomUUID()}`,
      raw,
      this.config.UPLOAD_TTL_MS,
    );
    return { ...view, content_download: download };
  }
}
