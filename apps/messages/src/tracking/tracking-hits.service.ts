import { randomUUID } from 'node:crypto';

import { CodedError, type StreamEventOf, type StreamSubject } from '@envoi/contracts-core';
import {
  type MessageClickedEvent,
  type MessageOpenedEvent,
  MessagesErrorCode,
  MessagesStreamSubjects,
  type TrackedClickResult,
  type TrackedOpenResult,
  type TrackingHitRequest,
} from '@envoi/contracts-messages';
import { readTrackingToken } from '@envoi/shared-composition';
import { enqueueEvent, OutboxRelayService } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { MessagesConfig } from '../messages.config';
import { isBot } from './bots';
import { type HitCounter, type HitMessage, TrackingRepository } from './tracking.repository';

const notFound = () => new CodedError(MessagesErrorCode.TrackingNotFound, 'no such tracking link');

/**
 * Opens and clicks from the public tracking routes (platform notes 3.3): the token is checked
 * (HMAC), the message's counter goes up, and `message.opened` / `message.clicked` is published
 * through the outbox in the same transaction, for the first TRACKING_EVENTS_PER_MESSAGE hits of
 * each kind (a pixel reloaded in a loop counts, but raises no storm of events). A click goes to
 * the URL stored when the message was accepted, never to one taken from the request.
 */
@Injectable()
export class TrackingHitsService {
  private readonly secret: Buffer;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tracking: TrackingRepository,
    private readonly config: MessagesConfig,
    private readonly outbox: OutboxRelayService,
  ) {
    this.secret = Buffer.from(config.TRACKING_SECRET, 'utf8');
  }

  async open(request: TrackingHitRequest): Promise<TrackedOpenResult> {
    const token = readTrackingToken(this.secret, request.token);
    if (!token || token.kind !== 'open') throw notFound();
    await this.record(
      token.messageId,
      'open_count',
      MessagesStreamSubjects.opened,
      (message, time) => ({
        id: randomUUID(),
        type: 'message.opened',
        timestamp: time,
        data: { ...eventFields(message), event: 'on_opened', ...visitor(request) },
      }),
    );
    return { tracked: true };
  }

  async click(request: TrackingHitRequest): Promise<TrackedClickResult> {
    const token = readTrackingToken(this.secret, request.token);
    if (!token || token.kind !== 'click') throw notFound();
    const url = await this.tracking.linkUrl(token.messageId, token.index);
    if (url === undefined) throw notFound();
    await this.record(
      token.messageId,
      'click_count',
      MessagesStreamSubjects.clicked,
      (message, time) => ({
        id: randomUUID(),
        type: 'message.clicked',
        timestamp: time,
        data: { ...eventFields(message), event: 'on_clicked', url, ...visitor(request) },
      }),
    );
    return { url };
  }

  /** Counts the hit and, within the cap, enqueues its event, in one transaction. */
  private async record<S extends StreamSubject<MessageOpenedEvent | MessageClickedEvent>>(
    messageId: string,
    counter: HitCounter,
    subject: S,
    event: (message: HitMessage, time: string) => StreamEventOf<S>,
  ): Promise<void> {
    const published = await this.dataSource.transaction(async (manager) => {
      const message = await this.tracking.countHit(messageId, counter, manager);
      if (!message) throw notFound();
      if (message.count > this.config.TRACKING_EVENTS_PER_MESSAGE) return false;
      await enqueueEvent(manager, subject, event(message, new Date().toISOString()));
      return true;
    });
    if (published) this.outbox.notify();
  }
}

function eventFields(message: HitMessage) {
  return {
    account_id: message.account_id,
    from: message.sender,
    recipient: message.recipient,
    subject: message.subject,
    message_id_header: message.message_id_header,
    id: message.id,
  };
}

function visitor(request: TrackingHitRequest) {
  const userAgent = request.user_agent ?? '';
  return { user_agent: userAgent, ip: request.ip ?? '', is_bot: isBot(userAgent) };
}
