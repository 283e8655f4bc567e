import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** A routed message as the MX received it, copied from its spool (which expires). */
@Entity({ name: 'inbound_messages' })
@Index('inbound_messages_created_at_idx', ['createdAt'])
export class InboundMessageEntity {
  /** The MX's inbound id. */
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'inbound_messages_pkey' })
  id!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  @Column({ type: 'timestamptz' })
  receivedAt!: Date;

  @Column({ type: 'bytea' })
  raw!: Buffer;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt!: Date;
}
