import { Inbox } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

import { SUPPRESSIONS_SCHEMA } from '../database/data-source-options';

/** The service's inbox: the delivery events handled (purged after PROCESSED_EVENTS_RETENTION_MS). */
const SUPPRESSIONS_INBOX = new Inbox(SUPPRESSIONS_SCHEMA);

/** The statements on suppressions.processed_events, through the shared inbox. */
@Injectable()
export class ProcessedEventsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  seen(eventId: string): Promise<boolean> {
    return SUPPRESSIONS_INBOX.seen(this.dataSource, eventId);
  }

  async record(eventId: string): Promise<void> {
    await SUPPRESSIONS_INBOX.claim(this.dataSource, [{ eventId }]);
  }

  /** Deletes up to `limit` records older than `olderThanMs`; returns how many. */
  purgeOlderThan(olderThanMs: number, limit: number): Promise<number> {
    return SUPPRESSIONS_INBOX.purgeOlderThan(this.dataSource, olderThanMs, limit);
  }
}
