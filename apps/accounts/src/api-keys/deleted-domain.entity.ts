import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A domain whose deletion this service has handled (its key scopes are gone). Granting a scope
 * checks it, under the same lock, so that a grant resolved just before the deletion cannot
 * store a scope the deletion has already swept. Kept for a day, far longer than a grant takes.
 */
@Entity({ name: 'deleted_domains' })
export class DeletedDomainEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'deleted_domains_pkey' })
  domainId!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  @Column({ type: 'varchar', length: 253 })
  domain!: string;

  /** When the domains service deleted it. */
  @Column({ type: 'timestamptz' })
  deletedAt!: Date;

  /** When this service handled the deletion; old rows are purged. */
  @Index('deleted_domains_recorded_at_idx')
  @CreateDateColumn({ type: 'timestamptz' })
  recordedAt!: Date;
}
