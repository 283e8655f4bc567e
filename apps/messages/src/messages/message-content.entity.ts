import { Column, Entity, Index, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';

import { MessageEntity } from './message.entity';

/** The raw RFC 822 message as accepted; `raw` becomes null when data retention purges it. */
@Entity({ name: 'message_contents' })
@Index('message_contents_purge_at_idx', ['purgeAt'], { where: 'raw IS NOT NULL' })
export class MessageContentEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'message_contents_pkey' })
  messageId!: string;

  @OneToOne(() => MessageEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'message_id', foreignKeyConstraintName: 'message_contents_message_id_fkey' })
  message?: MessageEntity;

  @Column({ type: 'bytea', nullable: true })
  raw!: Buffer | null;

  /** Bytes of the raw message (kept after the purge). */
  @Column({ type: 'integer' })
  size!: number;

  /** When data retention purges `raw`. */
  @Column({ type: 'timestamptz' })
  purgeAt!: Date;

  @Column({ type: 'timestamptz', nullable: true })
  purgedAt!: Date | null;
}
