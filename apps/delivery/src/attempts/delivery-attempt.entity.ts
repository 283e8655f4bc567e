import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** `in_progress`: claimed by a worker until `lease_until`; `done`: its outcome is recorded. */
export type AttemptState = 'in_progress' | 'done';

/**
 * One delivery attempt of a message: the idempotency record of its job (unique per message and
 * attempt number) and its log line (time, remote host, reply, status). A worker claims the row
 * before any network I/O and records the outcome, the outcome's event and the next attempt's job
 * in one transaction, so a job seen again after that never sends again.
 */
@Entity({ name: 'attempts' })
@Index('attempts_message_id_attempt_key', ['messageId', 'attempt'], { unique: true })
@Index('attempts_lease_until_idx', ['leaseUntil'], { where: "state = 'in_progress'" })
export class DeliveryAttemptEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'attempts_pkey' })
  id!: string;

  @Column({ type: 'uuid' })
  messageId!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  /** 1 for the first attempt. */
  @Column({ type: 'integer' })
  attempt!: number;

  @Column({ type: 'varchar', length: 16 })
  state!: AttemptState;

  /** The claim of the worker running it: its outcome is recorded only under this token. */
  @Column({ type: 'uuid', nullable: true })
  claimToken!: string | null;

  /** A claim not finished by then was abandoned (the worker died): see the README. */
  @Column({ type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  @Column({ type: 'timestamptz' })
  startedAt!: Date;

  @Column({ type: 'timestamptz', nullable: true })
  finishedAt!: Date | null;

  /** delivered, transient_error, failed, bounced or suppressed: the event it led to. */
  @Column({ type: 'varchar', length: 16, nullable: true })
  outcome!: string | null;

  /** The message status the outcome leads to (Delivered, Deferred, …). */
  @Column({ type: 'varchar', length: 32, nullable: true })
  status!: string | null;

  @Column({ type: 'varchar', length: 255, default: '' })
  remoteHost!: string;

  @Column({ type: 'text', default: '' })
  reply!: string;

  @Column({ type: 'varchar', length: 8, nullable: true })
  bounceClassification!: string | null;

  /** Whether the session ran over TLS (null: no session). */
  @Column({ type: 'boolean', nullable: true })
  tls!: boolean | null;

  @Column({ type: 'boolean', default: false })
  sandbox!: boolean;

  /** Recipients that accepted the message in this attempt (a retry skips them). */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  deliveredTo!: string[];

  /** Recipients that refused the message for good in this attempt (a retry skips them too). */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  bouncedTo!: string[];

  /** When the next attempt's job was scheduled for, after a transient failure. */
  @Column({ type: 'timestamptz', nullable: true })
  nextAttemptAt!: Date | null;
}
