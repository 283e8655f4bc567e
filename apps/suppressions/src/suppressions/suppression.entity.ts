import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

export const SUPPRESSION_SOURCES = ['manual', 'automatic'] as const;
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];

/** Unique constraints: one suppression per account, address and domain (null: every domain). */
export const GLOBAL_KEY = 'suppressions_account_id_email_global_key';
export const DOMAIN_KEY = 'suppressions_account_id_email_domain_key';

/**
 * A suppressed address of an account. An expired row is no suppression: every read filters on
 * `expires_at > now()`, and the purge deletes expired rows.
 */
@Entity({ name: 'suppressions' })
@Index(GLOBAL_KEY, ['accountId', 'email'], { unique: true, where: 'domain IS NULL' })
@Index(DOMAIN_KEY, ['accountId', 'email', 'domain'], {
  unique: true,
  where: 'domain IS NOT NULL',
})
@Index('suppressions_account_id_seq_idx', ['accountId', 'seq'])
@Index('suppressions_account_id_domain_seq_idx', ['accountId', 'domain', 'seq'])
export class SuppressionEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'suppressions_pkey' })
  id!: string;

  /** Keyset position for lists; never exposed. */
  @Index('suppressions_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  /** Normalised: trimmed, lowercased. */
  @Column({ type: 'varchar', length: 320 })
  email!: string;

  /** Normalised hostname the suppression applies to; null: every domain of the account. */
  @Column({ type: 'varchar', length: 253, nullable: true })
  domain!: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  reason!: string | null;

  /** Set by the service, so that the record and its event carry the same instant. */
  @Column({ type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Index('suppressions_expires_at_idx')
  @Column({ type: 'timestamptz' })
  expiresAt!: Date;

  /** Through the API, or automatic (hard bounce, repeated failures). */
  @Column({ type: 'varchar', length: 16 })
  source!: SuppressionSource;
}
