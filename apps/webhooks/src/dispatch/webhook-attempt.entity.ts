import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { WebhookDeliveryEntity } from './webhook-delivery.entity';

/** One call made for a delivery, as `GET …/webhooks/{id}/deliveries` shows it (newest first). */
@Entity({ name: 'webhook_attempts' })
@Index('webhook_attempts_webhook_id_seq_idx', ['webhookId', 'seq'])
@Index('webhook_attempts_delivery_id_idx', ['deliveryId'])
export class WebhookAttemptEntity {
  /** Keyset position for lists. */
  @PrimaryColumn({
    type: 'bigint',
    generated: 'identity',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'webhook_attempts_pkey',
  })
  seq!: string;

  @Column({ type: 'uuid' })
  deliveryId!: string;

  @Column({ type: 'uuid' })
  webhookId!: string;

  @Column({ type: 'varchar', length: 255 })
  eventId!: string;

  @Column({ type: 'varchar', length: 64 })
  eventType!: string;

  /** 1 for the first attempt. */
  @Column({ type: 'integer' })
  attempt!: number;

  @Column({ type: 'timestamptz' })
  attemptedAt!: Date;

  /** The HTTP status; null when no response came (timeout, refused, …). */
  @Column({ type: 'integer', nullable: true })
  responseStatus!: number | null;

  /** Why no response came; null when one did. */
  @Column({ type: 'varchar', length: 255, nullable: true })
  error!: string | null;

  @Column({ type: 'integer' })
  durationMs!: number;

  /** The first 1 KB of the response body. */
  @Column({ type: 'text', default: '' })
  responseBody!: string;

  /** When the next attempt is due; null when this one settled the delivery. */
  @Column({ type: 'timestamptz', nullable: true })
  nextRetryAt!: Date | null;

  @ManyToOne(() => WebhookDeliveryEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'delivery_id',
    foreignKeyConstraintName: 'webhook_attempts_delivery_id_fkey',
  })
  delivery?: WebhookDeliveryEntity;
}
