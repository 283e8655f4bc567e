import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A received report (a bounce or complaint mail, by the MX's inbound id) applied to one message:
 * the record that makes a redelivered event change nothing. Purged after
 * INBOUND_REPORTS_RETENTION_MS, once the stream can no longer deliver the event again.
 */
@Entity({ name: 'inbound_reports' })
@Index('inbound_reports_handled_at_idx', ['handledAt'])
export class InboundReportEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'inbound_reports_pkey' })
  inboundId!: string;

  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'inbound_reports_pkey' })
  messageId!: string;

  /** hard, soft or complaint. */
  @Column({ type: 'varchar', length: 16 })
  outcome!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  handledAt!: Date;
}

/**
 * A received bounce or complaint mail that matched no message (or that no parser understood),
 * kept for an operator to inspect: its first bytes (INBOUND_UNMATCHED_MAX_BYTES), why, and
 * where it came from. Purged after INBOUND_UNMATCHED_RETENTION_MS.
 */
@Entity({ name: 'inbound_unmatched' })
@Index('inbound_unmatched_inbound_id_recipient_key', ['inboundId', 'recipient'], { unique: true })
@Index('inbound_unmatched_stored_at_idx', ['storedAt'])
export class InboundUnmatchedEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'inbound_unmatched_pkey' })
  id!: string;

  @Column({ type: 'uuid' })
  inboundId!: string;

  /** bounce or feedback: the address it was sent to. */
  @Column({ type: 'varchar', length: 16 })
  kind!: string;

  @Column({ type: 'text' })
  reason!: string;

  /** MAIL FROM (empty for the null sender). */
  @Column({ type: 'varchar', length: 320 })
  envelopeFrom!: string;

  /** The bounce or feedback address it was sent to. */
  @Column({ type: 'varchar', length: 320 })
  recipient!: string;

  /** The spooled object's name (the spool expires: `content` keeps the first bytes). */
  @Column({ type: 'varchar', length: 255 })
  spoolName!: string;

  /** The whole mail's size, bytes. */
  @Column({ type: 'integer' })
  size!: number;

  /** The mail's first bytes; null when the spool could not be read. */
  @Column({ type: 'bytea', nullable: true })
  content!: Buffer | null;

  @Column({ type: 'timestamptz' })
  receivedAt!: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  storedAt!: Date;
}
