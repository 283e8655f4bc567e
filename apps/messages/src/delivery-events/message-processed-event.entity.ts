import { ProcessedEventEntity } from '@envoi/shared-outbox';
import { Entity, JoinColumn, ManyToOne } from 'typeorm';

import { MessageEntity } from '../messages/message.entity';

/**
 * The shared inbox table, as the messages schema has it: an entry goes with the message it was
 * about (deleted with it by metadata retention), through this foreign key.
 */
@Entity({ name: 'processed_events' })
export class MessageProcessedEventEntity extends ProcessedEventEntity {
  @ManyToOne(() => MessageEntity, { onDelete: 'CASCADE', nullable: true })
  @JoinColumn({ name: 'record_id', foreignKeyConstraintName: 'processed_events_record_id_fkey' })
  message?: MessageEntity | null;
}
