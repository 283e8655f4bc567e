import { EVENTS_STREAM } from '@envoi/contracts-core';
import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A durable event or job waiting for (or done with) publication, in the emitting service's own
 * schema: written in the same transaction as the state change it announces, published by the
 * relay once it is due. A service adds this entity to its DataSource and generates the table in
 * its migrations.
 */
@Entity({ name: 'outbox' })
@Index('outbox_due_idx', ['availableAt', 'seq'], {
  where: 'published_at IS NULL AND cancelled_at IS NULL',
})
@Index('outbox_published_at_idx', ['publishedAt'], { where: 'published_at IS NOT NULL' })
@Index('outbox_cancelled_at_idx', ['cancelledAt'], { where: 'cancelled_at IS NOT NULL' })
export class OutboxMessageEntity {
  /** The event or job id: also its `Nats-Msg-Id`, so a re-published row is dropped by the stream. */
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'outbox_pkey' })
  id!: string;

  /** Publication order among rows due at the same time. */
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  /** The JetStream stream the subject belongs to (`EVENTS`, `DELIVERY`). */
  @Column({ type: 'varchar', length: 64, default: EVENTS_STREAM })
  stream!: string;

  /** The stream subject (`events.domain.dns_error.v1`, `delivery.jobs.v1`). */
  @Column({ type: 'varchar', length: 255 })
  subject!: string;

  @Column({ type: 'jsonb' })
  payload!: unknown;

  /** The trace headers (request id, traceparent, account) of the work that wrote the row. */
  @Column({ type: 'jsonb', nullable: true })
  trace!: Record<string, string> | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  /** Not published before this time (a scheduled message's delivery job); now by default. */
  @Column({ type: 'timestamptz', default: () => 'now()' })
  availableAt!: Date;

  /** Set once the stream acknowledged the row; published rows are purged after a while. */
  @Column({ type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  /** Set when the row was withdrawn before publication: it is never published. */
  @Column({ type: 'timestamptz', nullable: true })
  cancelledAt!: Date | null;

  /** Publication attempts that failed. */
  @Column({ type: 'integer', default: 0 })
  failedAttempts!: number;

  @Column({ type: 'text', nullable: true })
  lastError!: string | null;
}
