import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { MessageEntity } from '../messages/message.entity';

/**
 * A link of a message's HTML rewritten for click tracking, stored at accept time: a click is
 * redirected to this URL, never to anything read from the request (no open redirect). Deleted
 * with its message.
 */
@Entity({ name: 'tracked_links' })
export class TrackedLinkEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'tracked_links_pkey' })
  messageId!: string;

  /** The link's position among the message's tracked links (0-based). */
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'tracked_links_pkey' })
  position!: number;

  @ManyToOne(() => MessageEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'tracked_links_message_id_fkey' })
  message?: MessageEntity;

  @Column({ type: 'text' })
  url!: string;
}
