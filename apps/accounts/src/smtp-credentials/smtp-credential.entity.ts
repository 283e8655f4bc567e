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

/**
 * An SMTP credential. The password is held twice: as a scrypt hash, which AUTH checks, and sealed
 * with SMTP_PASSWORD_ENCRYPTION_KEY, because the dashboard shows it again (platform notes 2.10).
 */
@Entity({ name: 'smtp_credentials' })
@Index('smtp_credentials_account_id_seq_idx', ['accountId', 'seq'])
export class SmtpCredentialEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'smtp_credentials_pkey' })
  id!: string;

  /** Keyset position for lists; never exposed. */
  @Index('smtp_credentials_seq_key', { unique: true })
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'smtp_credentials_account_id_fkey' })
  account?: AccountEntity;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Index('smtp_credentials_username_key', { unique: true })
  @Column({ type: 'varchar', length: 64 })
  username!: string;

  @Column({ type: 'boolean' })
  sandbox!: boolean;

  @Column({ type: 'varchar', length: 16 })
  scope!: 'global' | 'scoped';

  /** `scrypt$N$r$p$salt$key` (smtp-password.ts). */
  @Column({ type: 'varchar', length: 200 })
  passwordHash!: string;

  /** AES-256-GCM, bound to this credential's id. */
  @Column({ type: 'text' })
  passwordCiphertext!: string;
}

/** A domain a scoped credential may send from, resolved to its id when linked. */
@Entity({ name: 'smtp_credential_domains' })
@Index('smtp_credential_domains_domain_id_idx', ['domainId'])
export class SmtpCredentialDomainEntity {
  @PrimaryColumn({
    type: 'uuid',
    primaryKeyConstraintName: 'smtp_credential_domains_pkey',
  })
  credentialId!: string;

  /** Normalised domain name (lowercase, no trailing dot). */
  @PrimaryColumn({
    type: 'varchar',
    length: 253,
    primaryKeyConstraintName: 'smtp_credential_domains_pkey',
  })
  domain!: string;

  @Column({ type: 'uuid' })
  domainId!: string;

  /** Order in which the domains were given; the record lists them in this order. */
  @Column({ type: 'smallint' })
  position!: number;

  @ManyToOne(() => SmtpCredentialEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({
    name: 'credential_id',
    foreignKeyConstraintName: 'smtp_credential_domains_credential_id_fkey',
  })
  credential?: SmtpCredentialEntity;
}

/** Failed SMTP logins counted for one remote address or one username (`address:…`, `username:…`). */
@Entity({ name: 'smtp_login_failures' })
export class SmtpLoginFailureEntity {
  @PrimaryColumn({
    type: 'varchar',
    length: 300,
    primaryKeyConstraintName: 'smtp_login_failures_pkey',
  })
  subject!: string;

  @Index('smtp_login_failures_window_started_at_idx')
  @Column({ type: 'timestamptz' })
  windowStartedAt!: Date;

  @Column({ type: 'integer' })
  failures!: number;

  @Column({ type: 'timestamptz', nullable: true })
  blockedUntil!: Date | null;
}
