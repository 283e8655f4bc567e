import { ListenerStreamColumns } from '@envoi/shared-listener-streams';
import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A customer's inbound route: mail for the recipient pattern is POSTed to the URL. */
@Entity({ name: 'routes' })
@Index('routes_account_id_seq_idx', ['accountId', 'seq'])
@Index('routes_account_id_domain_name_idx', ['accountId', 'domainName'])
export class RouteEntity extends ListenerStreamColumns {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'routes_pkey' })
  id!: string;

  /** Keyset position for lists; never exposed. */
  @Index('routes_seq_key', { unique: true })
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

  /** The pattern as answered: lowercase, its domain normalised; `""` matches every address. */
  @Column({ type: 'varchar', length: 255 })
  recipient!: string;

  /** The domain the pattern names (id and name); null: every domain of the account. */
  @Column({ type: 'uuid', nullable: true })
  domainId!: string | null;

  @Column({ type: 'varchar', length: 253, nullable: true })
  domainName!: string | null;

  @Column({ type: 'boolean', default: true })
  enabled!: boolean;

  @Column({ type: 'boolean', default: false }) attachments!: boolean;
  @Column({ type: 'boolean', default: false }) headers!: boolean;
  @Column({ type: 'boolean', default: false }) groupByMessageId!: boolean;
  @Column({ type: 'boolean', default: false }) stripReplies!: boolean;

  /** The signing secret, encrypted (AES-256-GCM) with the service's key. */
  @Column({ type: 'text' })
  secretCiphertext!: string;

  @Column({ type: 'bigint', default: 0 })
  successCount!: string;

  @Column({ type: 'bigint', default: 0 })
  errorCount!: string;

  @Column({ type: 'integer', default: 0 })
  errorsSinceLastSuccess!: number;

  @Column({ type: 'timestamptz', nullable: true })
  lastRequestAt!: Date | null;
}
