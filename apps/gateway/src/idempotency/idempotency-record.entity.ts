import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** Where an idempotency key stands: being executed, held after a secret-bearing 4xx, or done. */
export type IdempotencyState = 'executing' | 'held' | 'completed';

/**
 * One `Idempotency-Key` of one account. `expires_at` is the lease end while executing or held,
 * and the end of the replay lifetime once completed; an expired record may be taken over.
 */
@Entity({ name: 'idempotency_records' })
@Index('idempotency_records_expires_at_idx', ['expiresAt'])
export class IdempotencyRecordEntity {
  @PrimaryColumn('uuid')
  accountId!: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  idempotencyKey!: string;

  @Column({ type: 'varchar', length: 16 })
  method!: string;

  @Column('text')
  path!: string;

  /** SHA-256 of the request body, hex. */
  @Column({ type: 'char', length: 64 })
  bodySha256!: string;

  @Column({ type: 'varchar', length: 16 })
  state!: IdempotencyState;

  /** Which execution owns the record; a late finisher whose lease was taken over changes nothing. */
  @Column('uuid')
  claimToken!: string;

  @Column({ type: 'smallint', nullable: true })
  statusCode!: number | null;

  @Column({ type: 'text', nullable: true })
  contentType!: string | null;

  /** The response body exactly as sent, or its AES-256-GCM envelope when `encrypted`. */
  @Column({ type: 'bytea', nullable: true })
  responseBody!: Buffer | null;

  @Column({ type: 'boolean', default: false })
  encrypted!: boolean;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column('timestamptz')
  expiresAt!: Date;
}
