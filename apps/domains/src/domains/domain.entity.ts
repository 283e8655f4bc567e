import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

import type { RecordChecks } from './dns-records';

/** A sending domain of an account, with its DKIM key and what the last DNS check found. */
@Entity({ name: 'domains' })
@Index('domains_account_id_name_key', ['accountId', 'name'], { unique: true })
@Index('domains_account_id_seq_idx', ['accountId', 'seq'])
@Index('domains_name_idx', ['name'])
export class DomainEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'domains_pkey' })
  id!: string;

  /** Keyset position for lists; never exposed. */
  @Index('domains_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  /** Normalised: lowercase, no trailing dot. */
  @Column({ type: 'varchar', length: 253 })
  name!: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  /** Increases with every change that alters a sender authorization (caches compare it). */
  @Column({ type: 'integer', default: 1 })
  version!: number;

  /** Subdomains, relative to the domain; null means the default. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  trackingSubdomain!: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  returnPathSubdomain!: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  subscriptionSubdomain!: string | null;

  @Column({ type: 'varchar', length: 200, nullable: true })
  mediaSubdomain!: string | null;

  @Column({ type: 'smallint', nullable: true })
  dkimRotationIntervalDays!: number | null;

  /** The per-domain selector override; null: `dkimDefaultSelector`. */
  @Column({ type: 'varchar', length: 62, nullable: true })
  dkimSelector!: string | null;

  /** The default selector when the domain was created (a later default does not move it). */
  @Column({ type: 'varchar', length: 62 })
  dkimDefaultSelector!: string;

  /** Base64 SubjectPublicKeyInfo: the `p=` of the DKIM record. */
  @Column({ type: 'text' })
  dkimPublicKey!: string;

  /** AES-256-GCM sealed PKCS#8 PEM (see DkimKeyCipher); never leaves the service but to signers. */
  @Column({ type: 'bytea' })
  dkimPrivateKeySealed!: Buffer;

  @Column({ type: 'boolean', default: false })
  dnsValid!: boolean;

  @Column({ type: 'timestamptz', nullable: true })
  lastDnsCheckAt!: Date | null;

  /** What the last checks found, per record. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  dnsChecks!: RecordChecks;

  /** When the periodic check is due; claimed with a lease while a replica checks it. */
  @Index('domains_next_check_at_idx')
  @Column({ type: 'timestamptz', default: () => 'now()' })
  nextCheckAt!: Date;

  /** Subdomains whose record has verified, and DKIM's selector once DKIM verified: locked. */
  @Column({ type: 'boolean', default: false })
  trackingLocked!: boolean;

  @Column({ type: 'boolean', default: false })
  returnPathLocked!: boolean;

  @Column({ type: 'boolean', default: false })
  subscriptionLocked!: boolean;

  @Column({ type: 'boolean', default: false })
  mediaLocked!: boolean;

  @Column({ type: 'boolean', default: false })
  dkimSelectorLocked!: boolean;
}
