import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { SendEntity } from '../messages/send.entity';

/**
 * A tracked link of a send whose HTML is the same for every recipient, stored once (a templated
 * HTML's links are stored per message, in tracked_links). Deleted with its send.
 */
@Entity({ name: 'send_links' })
export class SendLinkEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'send_links_pkey' })
  sendId!: string;

  /** The link's position among the tracked links (0-based). */
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'send_links_pkey' })
  position!: number;

  @ManyToOne(() => SendEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'send_id', foreignKeyConstraintName: 'send_links_send_id_fkey' })
  send?: SendEntity;

  @Column({ type: 'text' })
  url!: string;
}
