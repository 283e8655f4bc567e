import { listenerStreamEventColumns } from '@envoi/shared-listener-streams';
import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';

import { WebhookEntity } from '../webhooks/webhook.entity';

const TABLE = 'webhook_stream_events';

/** One event buffered for a webhook's stream listener, removed once written to it (or aged out). */
@Entity({ name: TABLE })
@Index(`${TABLE}_webhook_id_event_id_key`, ['webhookId', 'eventId'], { unique: true })
@Index(`${TABLE}_webhook_id_seq_idx`, ['webhookId', 'seq'])
@Index(`${TABLE}_created_at_idx`, ['createdAt'])
export class WebhookStreamEventEntity extends listenerStreamEventColumns(TABLE) {
  @Column({ type: 'uuid' })
  webhookId!: string;

  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: `${TABLE}_webhook_id_fkey` })
  webhook?: WebhookEntity;
}
