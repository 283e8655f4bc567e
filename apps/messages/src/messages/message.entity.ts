import type {
  DeliveryAttemptRecord,
  MessageStatus,
  SandboxResult,
} from '@envoi/contracts-messages';
import type { MessageKind } from '@envoi/shared-composition';
import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';

import { SendEntity } from './send.entity';

export type { MessageKind };

/**
 * One outbound message (one per recipient of a send, one per conversation send): its metadata,
 * status and the options it was accepted with. Its content is composed from its send (`sendId`)
 * and what it holds for its recipient; a message accepted before sends were stored has its raw
 * content in message_contents instead (`sendId` null).
 */
@Entity({ name: 'messages' })
@Index('messages_account_id_seq_idx', ['accountId', 'seq'])
@Index('messages_envelope_recipients_idx', ['envelopeRecipients'], { type: 'gin' })
@Index('messages_tags_idx', ['tags'], { type: 'gin' })
@Index('messages_retain_until_idx', ['retainUntil'])
@Index('messages_send_id_idx', ['sendId'])
export class MessageEntity {
  /** A UUIDv7 (time-ordered); also the local part of the Message-ID header. */
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'messages_pkey' })
  id!: string;

  /** Keyset position for lists (after the account: messages_account_id_seq_idx); never exposed. */
  @Column({ type: 'bigint', generated: 'identity', generatedIdentity: 'ALWAYS', update: false })
  seq!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  /** The sender domain (the domain of the From address). */
  @Column({ type: 'uuid' })
  domainId!: string;

  /** Its name, lowercase: what domain-scoped keys are matched against. */
  @Column({ type: 'varchar', length: 253 })
  domain!: string;

  @Column({ type: 'varchar', length: 16 })
  kind!: MessageKind;

  /** Which API accepted it. */
  @Column({ type: 'varchar', length: 2 })
  api!: 'v1' | 'v2';

  /** The API key (or SMTP credential) that sent it. */
  @Column({ type: 'uuid', nullable: true })
  credentialId!: string | null;

  /** The From address, as given. */
  @Column({ type: 'varchar', length: 254 })
  sender!: string;

  /** The recipient (a conversation's first one), as given. */
  @Column({ type: 'varchar', length: 254 })
  recipient!: string;

  /** Every address the message is delivered to (bcc included), lowercase. */
  @Column({ type: 'text', array: true })
  envelopeRecipients!: string[];

  /** As rendered. */
  @Column({ type: 'text' })
  subject!: string;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  tags!: string[];

  @Column({ type: 'varchar', length: 32 })
  status!: MessageStatus;

  /** `<id@domain>`. */
  @Column({ type: 'varchar', length: 320 })
  messageIdHeader!: string;

  @Column({ type: 'boolean', default: false })
  sandbox!: boolean;

  /** The sandbox outcome (sandbox messages only). */
  @Column({ type: 'varchar', length: 16, nullable: true })
  sandboxResult!: SandboxResult | null;

  /** Effective tracking: the request's override or the account's default. */
  @Column({ type: 'boolean' })
  trackOpens!: boolean;

  @Column({ type: 'boolean' })
  trackClicks!: boolean;

  /** Effective retention in days: the request's override or the account's default. */
  @Column({ type: 'smallint' })
  retentionMetadataDays!: number;

  @Column({ type: 'smallint' })
  retentionDataDays!: number;

  @Column({ type: 'timestamptz', nullable: true })
  firstAttemptAt!: Date | null;

  /** Dropped if not delivered by then. */
  @Column({ type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  /** The metadata is deleted then (and the content with it). */
  @Column({ type: 'timestamptz' })
  retainUntil!: Date;

  /** The delivery job's outbox row: cancelling withdraws it. */
  @Column({ type: 'uuid' })
  jobId!: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;

  @Column({ type: 'timestamptz', nullable: true })
  sentAt!: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;

  @Column({ type: 'integer', default: 0 })
  numAttempts!: number;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  deliveryAttempts!: DeliveryAttemptRecord[];

  @Column({ type: 'integer', default: 0 })
  openCount!: number;

  @Column({ type: 'integer', default: 0 })
  clickCount!: number;

  @Column({ type: 'varchar', length: 64, nullable: true })
  bounceClassification!: string | null;

  /** The request it was accepted with; null for a message stored with its raw content. */
  @Column({ type: 'uuid', nullable: true })
  sendId!: string | null;

  @ManyToOne(() => SendEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'send_id', foreignKeyConstraintName: 'messages_send_id_fkey' })
  send?: SendEntity;

  /** A send's recipient's display name, as given (its To). */
  @Column({ type: 'text', nullable: true })
  recipientName!: string | null;

  /** The recipient's own substitutions (over the send's global ones), in their order. */
  @Column({ type: 'json', nullable: true })
  substitutions!: Record<string, unknown> | null;

  /** When this message's content was purged alone (data retention 0, once it is final). */
  @Column({ type: 'timestamptz', nullable: true })
  contentPurgedAt!: Date | null;
}
