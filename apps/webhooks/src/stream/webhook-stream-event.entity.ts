import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
} from 'typeorm';

import { WebhookEntity } from '../webhooks/webhook.entity';

/**
 * One event buffered for a webhook's stream listener, removed once written to it (or aged out).
 * `seq` orders a webhook's events.
 */
@Entity({ name: 'webhook_stream_events' })
@Index('webhook_stream_events_webhook_id_event_id_key', ['webhookId', 'eventId'], { unique: true })
@Index('webhook_stream_events_webhook_id_seq_idx', ['webhookId', 'seq'])
@Index('webhook_stream_events_created_at_idx', ['createdAt'])
export class WebhookStreamEventEntity {
  @PrimaryColumn({
    type: 'bigint',
    generated: 'identity',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'webhook_stream_events_pkey',
  })
  seq!: string;

  @Column({ type: 'uuid' })
  webhookId!: string;

  /** The `webhook-id` a delivery of this event carries. */
  @Column({ type: 'varchar', length: 255 })
  eventId!: string;

  @Column({ type: 'varchar', length: 64 })
  eventType!: string;

  /** The payload, exactly as an endpoint would receive it. */
  @Column({ type: 'text' })
  body!: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;

  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'webhook_id',
    foreignKeyConstraintName: 'webhook_stream_events_webhook_id_fkey',
  })
  webhook?: WebhookEntity;
}
