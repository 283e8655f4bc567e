import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A durable event waiting for (or done with) publication, in the emitting service's own schema:
 * written in the same transaction as the state change it announces, published by the relay.
 * A service adds this entity to its DataSource and generates the table in its migrations.
 */
@Entity({ name: 'outbox' })
@Index('outbox_pending_seq_idx', ['seq'], { where: 'published_at IS NULL' })
@Index('outbox_published_at_idx', ['publishedAt'], { where: 'published_at IS NOT NULL' })
export class OutboxMessageEntity {
  /** The event id: also its `Nats-Msg-Id`, so a re-published event is dropped by the stream. */
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'outbox_pkey' })
  id!: string;

  /** Publication order. */
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  /** The stream subject (`events.domain.dns_error`). */
  @Column({ type: 'varchar', length: 255 })
  subject!: string;

  @Column({ type: 'jsonb' })
  payload!: unknown;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  /** Set once the stream acknowledged the event; published rows are purged after a while. */
  @Column({ type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;

  /** Publication attempts that failed. */
  @Column({ type: 'integer', default: 0 })
  failedAttempts!: number;

  @Column({ type: 'text', nullable: true })
  lastError!: string | null;
}
