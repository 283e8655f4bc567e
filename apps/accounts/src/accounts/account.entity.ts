import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';

import { UserEntity } from '../users/user.entity';

export const DEFAULT_MESSAGE_METADATA_RETENTION_DAYS = 30;
export const DEFAULT_MESSAGE_DATA_RETENTION_DAYS = 7;

/** A tenant: an account, or a sub-account when it has a parent. */
@Entity({ name: 'accounts' })
export class AccountEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'accounts_pkey' })
  id!: string;

  /** Keyset position for lists (sub-accounts); never exposed. */
  @Index('accounts_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  @Index('accounts_parent_account_id_idx')
  @Column({ type: 'uuid', nullable: true })
  parentAccountId!: string | null;

  @ManyToOne(() => AccountEntity, { onDelete: 'RESTRICT', nullable: true })
  @JoinColumn({
    name: 'parent_account_id',
    foreignKeyConstraintName: 'accounts_parent_account_id_fkey',
  })
  parentAccount?: AccountEntity | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  /** Null when not set, as the public record shows it. */
  @Column({ type: 'varchar', length: 2048, nullable: true })
  website!: string | null;

  @Column({ type: 'text', default: '' })
  about!: string;

  @Column({ type: 'boolean', default: false })
  trackOpens!: boolean;

  @Column({ type: 'boolean', default: false })
  trackClicks!: boolean;

  @Column({ type: 'boolean', default: false })
  rejectBadRecipients!: boolean;

  @Column({ type: 'boolean', default: false })
  rejectMistypedRecipients!: boolean;

  /** Days (1–30). */
  @Column({ type: 'smallint', default: DEFAULT_MESSAGE_METADATA_RETENTION_DAYS })
  messageMetadataRetention!: number;

  /** Days (0–30). */
  @Column({ type: 'smallint', default: DEFAULT_MESSAGE_DATA_RETENTION_DAYS })
  messageDataRetention!: number;

  /** Messages per calendar month (UTC) of a sub-account; 0 means no cap. */
  @Column({ type: 'integer', default: 0 })
  monthlyCredit!: number;

  /** Set while the account is suspended (by its parent, or by an operator); see account-status.ts. */
  @Column({ type: 'timestamptz', nullable: true })
  suspendedAt!: Date | null;

  @Column({ type: 'varchar', length: 500, nullable: true })
  suspensionReason!: string | null;

  /** Soft deletion of a sub-account: its data stays, its keys stop working. */
  @Column({ type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;

  /** The last message accepted for the account. */
  @Column({ type: 'timestamptz', nullable: true })
  lastActivityAt!: Date | null;

  @Index('accounts_owner_id_idx')
  @Column({ type: 'uuid' })
  ownerId!: string;

  @ManyToOne(() => UserEntity, { onDelete: 'RESTRICT', nullable: false })
  @JoinColumn({ name: 'owner_id', foreignKeyConstraintName: 'accounts_owner_id_fkey' })
  owner?: UserEntity;
}
