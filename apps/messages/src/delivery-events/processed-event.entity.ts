import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { MessageEntity } from '../messages/message.entity';

/**
 * A delivery event already applied to its message: the key that makes applying an event
 * idempotent (the row is inserted in the transaction that applies the event, so an event is
 * applied once however often the stream delivers it). Deleted with its message.
 */
@Entity({ name: 'processed_events' })
@Index('processed_events_message_id_idx', ['messageId'])
export class ProcessedEventEntity {
  /** The event's id (its `Nats-Msg-Id`). */
  @PrimaryColumn({
    type: 'varchar',
    length: 255,
    primaryKeyConstraintName: 'processed_events_pkey',
  })
  eventId!: string;

  @Column({ type: 'uuid' })
  messageId!: string;

  @ManyToOne(() => MessageEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'processed_events_message_id_fkey' })
  message?: MessageEntity;

  /** `message.delivered`, …. */
  @Column({ type: 'varchar', length: 64 })
  type!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  processedAt!: Date;
}
