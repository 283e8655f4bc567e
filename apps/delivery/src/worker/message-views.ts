import { CodedError } from '@envoi/contracts-core';
import {
  DELIVERY_JOB_MAX_MESSAGES,
  type DeliverySendRecord,
  type DeliveryView,
  MessagesErrorCode,
  MessagesSubjects,
  type SendSourcesRecord,
} from '@envoi/contracts-messages';
import {
  fromSourcesRecord,
  HtmlTracker,
  recipientPartOfView,
  type SendSources,
  StoredComposer,
} from '@envoi/shared-composition';
import { NATS_CONNECTION, RpcClient, takeUpload } from '@envoi/shared-nats';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { NatsConnection } from 'nats';

import { DeliveryConfig } from '../delivery.config';
import { Batcher, type BatcherLimits } from './batcher';

/**
 * One-message jobs pulled together read their views in one call: a few milliseconds' wait costs
 * a job far less than a call of its own costs the messages service.
 */
const ONE_VIEW_BATCH: BatcherLimits = { maxItems: DELIVERY_JOB_MAX_MESSAGES, maxWaitMs: 2 };

/** A message the chunk reply left out: its view is read alone. */
const READ_ALONE = Symbol('read alone');

/** A message to attempt: its view and, for a message of a stored send, that send's sources. */
export interface MessageView extends DeliveryView {
  sources?: SendSources;
}

/** A chunk's views, and the ids of messages whose content is read alone (see DeliveryViewsV2). */
export interface ChunkViews {
  views: MessageView[];
  separately: string[];
}

/** Whether the message still has something to send (data retention has not purged it). */
export function hasContent(view: MessageView): boolean {
  return Boolean(view.content_base64 ?? view.content_download ?? view.sources);
}

/** The views with their sends' sources (`sends`: each send's sources, already read). */
export function withSources(
  views: readonly DeliveryView[],
  sends: ReadonlyMap<string, SendSources>,
): MessageView[] {
  return views.map((view) => {
    const sources = view.composition && sends.get(view.composition.send_id);
    return sources ? { ...view, sources } : view;
  });
}

/**
 * Reads messages from the messages service (their views, each send's sources once per chunk) and
 * gives each one's bytes just before it is signed: composed here from its send's sources and its
 * recipient part, or as stored for a message accepted before sends were.
 */
@Injectable()
export class MessageViews {
  private readonly logger = new Logger(MessageViews.name);
  private readonly composer: StoredComposer;
  private readonly singles = new Batcher<string, MessageView | typeof READ_ALONE | null>(
    ONE_VIEW_BATCH,
    (messageIds) => this.readSingles(messageIds),
  );

  constructor(
    private readonly rpc: RpcClient,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: DeliveryConfig,
  ) {
    this.composer = new StoredComposer(new HtmlTracker(config));
  }

  /** The chunk's messages that still exist, in one call. */
  async chunk(messageIds: string[]): Promise<ChunkViews> {
    const reply = await this.rpc.request(
      MessagesSubjects.deliveryViewsV2,
      { message_ids: messageIds },
      { timeoutMs: this.config.RPC_TIMEOUT_MS },
    );
    const sends = new Map<string, SendSources>();
    for (const send of reply.sends)
      sends.set(send.id, fromSourcesRecord(await this.sourcesOf(send)));
    return { views: withSources(reply.views, sends), separately: reply.separately };
  }

  /**
   * A job's one message, or null when it no longer exists: read as a chunk's are (composed here),
   * in one call with the other jobs' messages asked for meanwhile, or alone when its stored bytes
   * do not fit that reply.
   */
  async one(messageId: string): Promise<MessageView | null> {
    const read = await this.singles.add(messageId);
    return read === READ_ALONE ? this.separate(messageId) : read;
  }

  private async readSingles(
    messageIds: readonly string[],
  ): Promise<Array<MessageView | typeof READ_ALONE | null>> {
    const { views, separately } = await this.chunk([...new Set(messageIds)]);
    const byId = new Map(views.map((view) => [view.id, view]));
    const alone = new Set(separately);
    return messageIds.map((id) => byId.get(id) ?? (alone.has(id) ? READ_ALONE : null));
  }

  /**
   * A message's view without its bytes (what a report about it needs), or null when it no
   * longer exists: its send's sources are not read, and only a message whose stored bytes do
   * not fit the chunk reply is read alone.
   */
  async withoutContent(messageId: string): Promise<DeliveryView | null> {
    const reply = await this.rpc.request(
      MessagesSubjects.deliveryViewsV2,
      { message_ids: [messageId] },
      { timeoutMs: this.config.RPC_TIMEOUT_MS },
    );
    if (reply.views[0]) return reply.views[0];
    return reply.separately.length > 0 ? this.separate(messageId) : null;
  }

  /** A message a chunk's reply left out (see DeliveryViewsV2), or null when it no longer exists. */
  async separate(messageId: string): Promise<MessageView | null> {
    try {
      return await this.rpc.request(
        MessagesSubjects.deliveryView,
        { message_id: messageId },
        { timeoutMs: this.config.RPC_TIMEOUT_MS },
      );
    } catch (error) {
      if (error instanceof CodedError && error.hasCode(MessagesErrorCode.MessageNotFound)) {
        return null;
      }
      throw error;
    }
  }

  /**
   * The message's exact bytes: composed from its send, or as carried by its view, with its
   * tracking added when it was submitted over SMTP.
   */
  async raw(view: MessageView): Promise<Buffer> {
    if (view.sources && view.composition) {
      return this.composer.compose(view.sources, recipientPartOfView(view, view.composition));
    }
    const carried = await this.carried(view);
    return view.submitted ? this.tracked(view, carried) : carried;
  }

  private async carried(view: MessageView): Promise<Buffer> {
    if (view.content_base64) return Buffer.from(view.content_base64, 'base64');
    if (view.content_download) return takeUpload(this.connection, view.content_download);
    throw new Error(`${view.id}: the view carries no content`);
  }

  /** A submitted message with its open and click tracking (platform notes 3.3), as API mail has. */
  private tracked(view: MessageView, raw: Buffer): Buffer {
    const choice = { opens: view.tracking.open, clicks: view.tracking.click };
    const tracked = this.composer.trackSubmitted(raw, view.id, choice);
    for (const reason of tracked.skipped) {
      this.logger.debug(`${view.id}: not tracked: ${reason}`);
    }
    return tracked.raw;
  }

  private async sourcesOf(send: DeliverySendRecord): Promise<SendSourcesRecord> {
    if (send.sources) return send.sources;
    if (!send.sources_download) throw new Error(`send ${send.id}: the reply carries no sources`);
    const bytes = await takeUpload(this.connection, send.sources_download);
    return JSON.parse(bytes.toString('utf8')) as SendSourcesRecord;
  }
}
