import { randomUUID } from 'node:crypto';

import {
  CodedError,
  CommonErrorCode,
  type MessageResponse,
  normalizeDomainName,
  type Page,
} from '@envoi/contracts-core';
import {
  INLINE_PAYLOAD_MAX_BYTES,
  type ListMessagesRequest,
  MESSAGE_DOWNLOADS_BUCKET,
  MESSAGE_STATUSES,
  type MessageFilters,
  type MessageRecord,
  type MessageRef,
  type MessageSummaryRecord,
} from '@envoi/contracts-messages';
import { parseMime } from '@envoi/shared-composition';
import { NATS_CONNECTION, putUpload } from '@envoi/shared-nats';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

import { MessagesConfig } from '../messages.config';
import { RetentionRepository } from '../retention/retention.repository';
import type { MessageEntity } from './message.entity';
import { toMessageSummary } from './message.mapper';
import { MessageContents } from './message-contents.service';
import { messageIdHeader, parseMessageRef } from './message-ids';
import { MessagesException } from './messages.exception';
import { MessagesRepository } from './messages.repository';

const KNOWN_STATUSES: ReadonlySet<string> = new Set(MESSAGE_STATUSES);

function normalizedDomains(domains: readonly string[] | undefined): string[] | undefined {
  return domains?.map(normalizeDomainName);
}

/** Reads, lists and cancels messages of an account. */
@Injectable()
export class MessagesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly messages: MessagesRepository,
    private readonly retention: RetentionRepository,
    private readonly contents: MessageContents,
    @Inject(NATS_CONNECTION) private readonly connection: NatsConnection,
    private readonly config: MessagesConfig,
  ) {}

  /** Newest first; every filter of the reference contract (see MessagesRepository.list). */
  async list(request: ListMessagesRequest): Promise<Page<MessageSummaryRecord>> {
    const domains = normalizedDomains(request.domains);
    if (domains?.length === 0) return { data: [], has_more: false };
    checkStatusFilter(request.filters);
    const page = await this.messages.list(
      request.account_id,
      domains,
      request.filters,
      request.page,
    );
    return { ...page, data: page.data.map(toMessageSummary) };
  }

  /**
   * The message with its raw content and parsed content (null once purged). Content too large
   * for a NATS reply travels through the downloads bucket (MessageRecord.content_download).
   */
  async get(ref: MessageRef): Promise<MessageRecord> {
    const message = await this.find(ref);
    const raw = await this.contents.raw(message);
    const record: MessageRecord = {
      ...toMessageSummary(message),
      content: raw === null ? null : raw.toString('utf8'),
      content_parsed: raw === null ? null : await parseMime(raw),
    };
    const json = Buffer.from(
      JSON.stringify({ content: record.content, content_parsed: record.content_parsed }),
      'utf8',
    );
    if (json.length <= INLINE_PAYLOAD_MAX_BYTES) return record;
    const download = await putUpload(
      this.connection,
      MESSAGE_DOWNLOADS_BUCKET,
      `${message.id}.${randomUUID()}`,
      json,
      this.config.UPLOAD_TTL_MS,
    );
    return { ...record, content: null, content_parsed: null, content_download: download };
  }

  /** Spec 3.2: a scheduled message becomes cancelled and never goes out. */
  async cancel(ref: MessageRef): Promise<MessageResponse> {
    const parsed = parseMessageRef(ref.message_id);
    if (!parsed) throw MessagesException.notFound();
    const domains = normalizedDomains(ref.domains) ?? null;
    const cancelled = await this.dataSource.transaction(async (manager) => {
      const message = await this.messages.cancelScheduled(
        parsed.id,
        ref.account_id,
        domains,
        manager,
      );
      if (message?.retentionDataDays === 0 && message.sendId !== null) {
        await this.retention.purgeFinishedSends([message.sendId], manager);
      }
      return message !== undefined;
    });
    if (cancelled) {
      const message = await this.find(ref);
      return { message: `message ${message.messageIdHeader} cancelled successfully` };
    }
    const message = await this.find(ref);
    if (message.status === 'Scheduled') {
      throw MessagesException.notCancellableAnyMore();
    }
    throw MessagesException.notCancellable(message.status);
  }

  /** By `<uuid@domain>` or the bare uuid, within the account and the domain restriction. */
  private async find(ref: MessageRef): Promise<MessageEntity> {
    const parsed = parseMessageRef(ref.message_id);
    if (!parsed) throw MessagesException.notFound();
    const message = await this.messages.findInAccount(parsed.id, ref.account_id);
    if (!message) throw MessagesException.notFound();
    if (
      parsed.domain !== undefined &&
      messageIdHeader(parsed.id, parsed.domain) !== message.messageIdHeader
    ) {
      throw MessagesException.notFound();
    }
    const domains = normalizedDomains(ref.domains);
    if (domains && !domains.includes(message.domain)) throw MessagesException.notFound();
    return message;
  }
}

/** Statuses of the getMessages filter must be known ones. */
function checkStatusFilter(filters: MessageFilters): void {
  if (filters.status === undefined || filters.status.length === 0) return;
  const unknown = filters.status.filter((status) => !KNOWN_STATUSES.has(status));
  if (unknown.length > 0) {
    throw new CodedError(
      CommonErrorCode.ValidationFailed,
      `invalid status filter: ${unknown.join(', ').slice(0, 200)}`,
    );
  }
}
