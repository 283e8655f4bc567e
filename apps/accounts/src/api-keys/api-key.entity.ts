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

import { AccountEntity } from '../accounts/account.entity';

/** An API key. The secret itself is never stored: only its SHA-256. */
@Entity({ name: 'api_keys' })
@Index('api_keys_account_id_seq_idx', ['accountId', 'seq'])
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'api_keys_pkey' })
  id!: string;

  /** Keyset position for lists; never exposed. */
  @Index('api_keys_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'api_keys_account_id_fkey' })
  account?: AccountEntity;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  /** Refreshed in batches reported by the edges, never on the request path. */
  @Column({ type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  @Column({ type: 'varchar', length: 255 })
  label!: string;

  /** Identifies the key in lists without revealing it (see api-key-secret.ts). */
  @Column({ type: 'varchar', length: 64 })
  publicKey!: string;

  /** Lowercase hex SHA-256 of the whole secret; what verification looks up. */
  @Index('api_keys_secret_hash_key', { unique: true })
  @Column({ type: 'char', length: 64 })
  secretHash!: string;

  /** Canonical CIDRs (spec 5.7); empty means unrestricted. */
  @Column({ type: 'text', array: true, default: () => "'{}'" })
  ipAllowList!: string[];
}
