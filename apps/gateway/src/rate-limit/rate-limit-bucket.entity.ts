import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One account's GCRA state for one limit class, shared by every gateway replica. The table is
 * UNLOGGED: a database crash resets the limits, which costs nothing worth a WAL write per request.
 */
@Entity({ name: 'rate_limit_buckets' })
export class RateLimitBucketEntity {
  @PrimaryColumn('uuid')
  accountId!: string;

  @PrimaryColumn({ type: 'varchar', length: 16 })
  limitClass!: string;

  /** Theoretical arrival time of the next request: the bucket is empty when it is in the past. */
  @Column('timestamptz')
  tat!: Date;

  /** Whether the last request counted against this bucket was let through. */
  @Column('boolean')
  allowed!: boolean;
}
