import { Inbox } from '@envoi/shared-outbox';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

import { SUPPRESSIONS_SCHEMA } from '../database/data-source-options';

/** The service's inbox: the delivery events handled (purged after PROCESSED_EVENTS_RETENTION_MS). */
const SUPPRESSIONS_INBOX = new Inbox(SUPPRESSIONS_SCHEMA);

/** The statements on suppressions.processed_events, through the shared inbox. */
@Injectable()
export class ProcessedEventsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Claims the events in one statement, in the caller's transaction; answers the ids not claimed
   * before. A claim another transaction holds waits for it to end.
   */
  claim(eventIds: readonly string[], manager: EntityManager): Promise<Set<string>> {
    return SUPPRESSIONS_INBOX.claim(
      manager,
      eventIds.map((eventId) => ({ eventId })),
    );
  }

  /** Deletes up to `limit` records older than `olderThanMs`; returns how many. */
  purgeOlderThan(olderThanMs: number, limit: number): Promise<number> {
    return SUPPRESSIONS_INBOX.purgeOlderThan(this.dataSource, olderThanMs, limit);
  }
}
