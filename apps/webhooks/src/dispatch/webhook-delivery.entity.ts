import { WEBHOOK_DELIVERY_STATES, type WebhookDeliveryState } from '@envoi/contracts-webhooks';
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

import { WebhookEntity } from '../webhooks/webhook.entity';

export const DELIVERY_STATES = WEBHOOK_DELIVERY_STATES;
export type DeliveryState = WebhookDeliveryState;

/** One event to send to one endpoint: written with the event's fan-out, once per pair. */
@Entity({ name: 'webhook_deliveries' })
@Index('webhook_deliveries_event_id_webhook_id_key', ['eventId', 'webhookId'], { unique: true })
@Index('webhook_deliveries_webhook_id_seq_idx', ['webhookId', 'seq'])
@Index('webhook_deliveries_due_idx', ['nextAttemptAt'], { where: `"state" = 'pending'` })
@Index('webhook_deliveries_settled_idx', ['updatedAt'], { where: `"state" <> 'pending'` })
@Index('webhook_deliveries_pending_idx', ['webhookId', 'nextAttemptAt', 'seq'], {
  where: `"state" = 'pending'`,
})
@Index('webhook_deliveries_leased_idx', ['webhookId', 'leaseUntil'], {
  where: `"state" = 'pending' AND "lease_until" IS NOT NULL`,
})
export class WebhookDeliveryEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'webhook_deliveries_pkey' })
  id!: string;

  /** Keyset position for lists. */
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  @Column({ type: 'uuid' })
  webhookId!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  /** The stream event's id: also the `webhook-id` header, the same on every attempt. */
  @Column({ type: 'varchar', length: 255 })
  eventId!: string;

  @Column({ type: 'varchar', length: 64 })
  eventType!: string;

  /** The JSON body, exactly as every attempt sends it. */
  @Column({ type: 'text' })
  body!: string;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  state!: DeliveryState;

  /** Attempts made (recorded) so far. */
  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  @Column({ type: 'timestamptz' })
  nextAttemptAt!: Date;

  /** While in the future, a replica is sending it; after, another may take it over. */
  @Column({ type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  /** The claim in progress: only its holder records the attempt. */
  @Column({ type: 'uuid', nullable: true })
  leaseToken!: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt!: Date;

  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'webhook_id',
    foreignKeyConstraintName: 'webhook_deliveries_webhook_id_fkey',
  })
  webhook?: WebhookEntity;
}
