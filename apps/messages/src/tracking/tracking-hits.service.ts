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
import { enqueueEvent, OutboxRelayService } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { MessagesConfig } from '../messages.config';
import { isBot } from './bots';
import { readTrackingToken } from './tracking-token';

/** The message fields an open or click event carries, and its counters after the hit. */
interface HitMessage {
  id: string;
  account_id: string;
  sender: string;
  recipient: string;
  subject: string;
  message_id_header: string;
  count: number;
}

const notFound = () => new CodedError(MessagesErrorCode.TrackingNotFound, 'no such tracking link');

/** Counts one hit (open or click) of a message and returns its fields; null when it is gone. */
async function countHit(
  manager: EntityManager,
  messageId: string,
  counter: 'open_count' | 'click_count',
): Promise<HitMessage | null> {
  // A CTE, so that the driver answers rows (an UPDATE's own answer is [rows, count]).
  const rows = await manager.query<HitMessage[]>(
    `WITH hit AS (
       UPDATE messages.messages SET ${counter} = ${counter} + 1, updated_at = now()
        WHERE id = $1
        RETURNING id, account_id, sender, recipient, subject, message_id_header, ${counter} AS count
     ) SELECT * FROM hit`,
    [messageId],
  );
  return rows[0] ?? null;
}

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
    const links = await this.dataSource.query<Array<{ url: string }>>(
      'SELECT url FROM messages.tracked_links WHERE message_id = $1 AND position = $2',
      [token.messageId, token.index],
    );
    const url = links[0]?.url;
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
    counter: 'open_count' | 'click_count',
    subject: S,
    event: (message: HitMessage, time: string) => StreamEventOf<S>,
  ): Promise<void> {
    const published = await this.dataSource.transaction(async (manager) => {
      const message = await countHit(manager, messageId, counter);
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
