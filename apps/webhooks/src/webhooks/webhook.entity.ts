import type { WebhookScope } from '@envoi/contracts-webhooks';
import { ListenerStreamColumns } from '@envoi/shared-listener-streams';
import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A customer's endpoint and the events it subscribes to. */
@Entity({ name: 'webhooks' })
@Index('webhooks_account_id_seq_idx', ['accountId', 'seq'])
export class WebhookEntity extends ListenerStreamColumns {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'webhooks_pkey' })
  id!: string;

  /** Keyset position for lists; never exposed. */
  @Index('webhooks_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 2048 })
  url!: string;

  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  /** Why the platform disabled it (too many consecutive failures, 410 Gone); null otherwise. */
  @Column({ type: 'varchar', length: 255, nullable: true })
  disabledReason!: string | null;

  @Column({ type: 'varchar', length: 16 })
  scope!: WebhookScope;

  /** The signing secret, encrypted (AES-256-GCM) with the service's key. */
  @Column({ type: 'text' })
  secretCiphertext!: string;

  @Column({ type: 'boolean', default: false }) onReception!: boolean;
  @Column({ type: 'boolean', default: false }) onDelivered!: boolean;
  @Column({ type: 'boolean', default: false }) onTransientError!: boolean;
  @Column({ type: 'boolean', default: false }) onFailed!: boolean;
  @Column({ type: 'boolean', default: false }) onBounced!: boolean;
  @Column({ type: 'boolean', default: false }) onSuppressed!: boolean;
  @Column({ type: 'boolean', default: false }) onOpened!: boolean;
  @Column({ type: 'boolean', default: false }) onClicked!: boolean;
  @Column({ type: 'boolean', default: false }) onSuppressionCreated!: boolean;
  @Column({ type: 'boolean', default: false }) onDnsError!: boolean;

  @Column({ type: 'bigint', default: 0 })
  successCount!: string;

  @Column({ type: 'bigint', default: 0 })
  errorCount!: string;

  @Column({ type: 'integer', default: 0 })
  errorsSinceLastSuccess!: number;

  @Column({ type: 'timestamptz', nullable: true })
  lastRequestAt!: Date | null;
}
