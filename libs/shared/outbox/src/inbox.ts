import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * An event the service has handled: its inbox, the key that makes handling a stream event
 * idempotent (claimed in the transaction that handles the event, or right after what it did is
 * committed). In the service's own schema, like the outbox: a service adds this entity to its
 * DataSource and generates the table in its migrations.
 */
@Entity({ name: 'processed_events' })
@Index('processed_events_processed_at_idx', ['processedAt'])
@Index('processed_events_record_id_idx', ['recordId'])
export class ProcessedEventEntity {
  /** The event's id (its `Nats-Msg-Id`). */
  @PrimaryColumn({
    type: 'varchar',
    length: 255,
    primaryKeyConstraintName: 'processed_events_pkey',
  })
  eventId!: string;

  /** `message.delivered`, …, when the service keeps it. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  type!: string | null;

  /**
   * The record the event was about, when the entry goes with it (the service's migration adds
   * the foreign key that deletes it).
   */
  @Column({ type: 'uuid', nullable: true })
  recordId!: string | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  processedAt!: Date;
}

/** An event to claim in the inbox. */
export interface InboxClaim {
  eventId: string;
  type?: string;
  recordId?: string;
}

/** A DataSource or a transaction's EntityManager. */
export interface InboxQueryable {
  query<T>(sql: string, parameters?: unknown[]): Promise<T>;
}

/** The processed events of one service's schema: claims, look-ups and the age-based purge. */
export class Inbox {
  private readonly claimSql: string;
  private readonly seenSql: string;
  private readonly purgeSql: string;

  constructor(schema: string) {
    this.claimSql = `
      INSERT INTO ${schema}.processed_events (event_id, type, record_id)
      SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::uuid[])
      ON CONFLICT (event_id) DO NOTHING
      RETURNING event_id`;
    this.seenSql = `SELECT 1 FROM ${schema}.processed_events WHERE event_id = $1`;
    this.purgeSql = `
      WITH purged AS (
        DELETE FROM ${schema}.processed_events
        WHERE event_id IN (
          SELECT event_id FROM ${schema}.processed_events
          WHERE processed_at <= now() - make_interval(secs => $2::double precision / 1000)
          ORDER BY processed_at
          LIMIT $1
          FOR UPDATE SKIP LOCKED
        )
        RETURNING 1
      )
      SELECT count(*)::int AS purged FROM purged`;
  }

  /** Claims the events (in the caller's transaction, if any); answers the ids new to the inbox. */
  async claim(db: InboxQueryable, claims: readonly InboxClaim[]): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const rows = await db.query<Array<{ event_id: string }>>(this.claimSql, [
      claims.map((claim) => claim.eventId),
      claims.map((claim) => claim.type ?? null),
      claims.map((claim) => claim.recordId ?? null),
    ]);
    return new Set(rows.map((row) => row.event_id));
  }

  /** Whether the event was handled before. */
  async seen(db: InboxQueryable, eventId: string): Promise<boolean> {
    const rows = await db.query<unknown[]>(this.seenSql, [eventId]);
    return rows.length > 0;
  }

  /** Deletes up to `limit` entries older than `olderThanMs`, oldest first; answers how many. */
  async purgeOlderThan(db: InboxQueryable, olderThanMs: number, limit: number): Promise<number> {
    const [row] = await db.query<Array<{ purged: number }>>(this.purgeSql, [limit, olderThanMs]);
    return row?.purged ?? 0;
  }
}
