import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { SendEntity } from './send.entity';

/** An attachment of a send, its bytes decoded, stored once for all its messages. */
@Entity({ name: 'send_attachments' })
export class SendAttachmentEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'send_attachments_pkey' })
  sendId!: string;

  /** Its place among the send's attachments (0-based), the order they are composed in. */
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'send_attachments_pkey' })
  position!: number;

  @ManyToOne(() => SendEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'send_id', foreignKeyConstraintName: 'send_attachments_send_id_fkey' })
  send?: SendEntity;

  @Column({ type: 'text' })
  fileName!: string;

  @Column({ type: 'text' })
  contentType!: string;

  @Column({ type: 'text', nullable: true })
  contentId!: string | null;

  @Column({ type: 'text', nullable: true })
  contentDisposition!: string | null;

  @Column({ type: 'bytea' })
  content!: Buffer;
}
