import type { AcceptSubmissionResult, CreateMessageResult } from '@envoi/contracts-messages';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A send committed under an `Idempotency-Key`, with the reply it answered: a retry of the same
 * request (after a reply that never reached the gateway) answers it again instead of sending a
 * copy. Kept for the gateway's replay lifetime, then purged.
 */
@Entity({ name: 'accepted_requests' })
@Index('accepted_requests_created_at_idx', ['createdAt'])
export class AcceptedRequestEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'accepted_requests_pkey' })
  accountId!: string;

  @PrimaryColumn({
    type: 'varchar',
    length: 255,
    primaryKeyConstraintName: 'accepted_requests_pkey',
  })
  idempotencyKey!: string;

  /** SHA-256 (hex) of the request as the gateway matches it: method, path, body. */
  @Column({ type: 'char', length: 64 })
  requestFingerprint!: string;

  /** `json`, not `jsonb`: the reply comes back with its fields in the order first sent. */
  @Column({ type: 'json' })
  reply!: CreateMessageResult | AcceptSubmissionResult;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;
}
