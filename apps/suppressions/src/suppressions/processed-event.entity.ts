import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A delivery event already handled: redeliveries (and replays of the EVENTS stream) of it change
 * nothing, even once its suppression was deleted. Kept a little longer than the stream keeps
 * events (PROCESSED_EVENTS_RETENTION_MS), then purged with the expired suppressions.
 */
@Entity({ name: 'processed_events' })
export class ProcessedEventEntity {
  /** The event's id (its `Nats-Msg-Id`). */
  @PrimaryColumn({
    type: 'varchar',
    length: 255,
    primaryKeyConstraintName: 'processed_events_pkey',
  })
  eventId!: string;

  @Index('processed_events_processed_at_idx')
  @Column({ type: 'timestamptz', default: () => 'now()' })
  processedAt!: Date;
}
