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

import { ApiKeyEntity } from './api-key.entity';

/** One scope granted to a key, in canonical form. */
@Entity({ name: 'api_key_scopes' })
@Index('api_key_scopes_api_key_id_scope_key', ['apiKeyId', 'scope'], { unique: true })
// A deleted domain's scopes are found by its id...
@Index('api_key_scopes_domain_id_idx', ['domainId'], { where: 'domain_id IS NOT NULL' })
// ...or, for scopes granted before domains were resolved, by its name.
@Index('api_key_scopes_unresolved_domain_idx', ['domain'], {
  where: 'domain_id IS NULL AND domain IS NOT NULL',
})
export class ApiKeyScopeEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'api_key_scopes_pkey' })
  id!: string;

  @Column({ type: 'uuid' })
  apiKeyId!: string;

  @ManyToOne(() => ApiKeyEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'api_key_id', foreignKeyConstraintName: 'api_key_scopes_api_key_id_fkey' })
  apiKey?: ApiKeyEntity;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  /** Canonical scope string (formatScope). */
  @Column({ type: 'varchar', length: 300 })
  scope!: string;

  /** Order in which the scopes were granted; the record lists them in this order. */
  @Column({ type: 'smallint' })
  position!: number;

  /** The domain name of a `{domain}` scope; null for static and `:all` scopes. */
  @Column({ type: 'varchar', length: 253, nullable: true })
  domain!: string | null;

  /**
   * The owned domain a `{domain}` scope names (resolved by the domains service when granted);
   * null for static and `:all` scopes, and for domain scopes granted before resolution existed.
   */
  @Column({ type: 'uuid', nullable: true })
  domainId!: string | null;
}
