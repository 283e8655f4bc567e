import type { ComposeAddress } from '@envoi/shared-composition';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

import type { MessageKind } from './message.entity';

/**
 * What every message of one accepted request shares, stored once: the sources its messages are
 * composed from when they are read or delivered (see StoredComposer). Its messages
 * (messages.send_id) hold what differs per recipient. The content columns become null when data
 * retention purges the send; the row goes with its metadata retention (its messages with it).
 */
@Entity({ name: 'sends' })
@Index('sends_purge_at_idx', ['purgeAt'], { where: 'purged_at IS NULL' })
@Index('sends_retain_until_idx', ['retainUntil'])
@Index('sends_account_id_message_id_header_idx', ['accountId', 'messageIdHeader'], {
  where: 'message_id_header IS NOT NULL',
})
export class SendEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'sends_pkey' })
  id!: string;

  @Column({ type: 'uuid' })
  accountId!: string;

  @Column({ type: 'varchar', length: 16 })
  kind!: MessageKind;

  /** Which API accepted it. */
  @Column({ type: 'varchar', length: 2 })
  api!: 'v1' | 'v2';

  /** The Date header of its messages. */
  @Column({ type: 'timestamptz' })
  acceptedAt!: Date;

  @Column({ type: 'jsonb' })
  fromAddress!: ComposeAddress;

  @Column({ type: 'jsonb', nullable: true })
  replyTo!: ComposeAddress | null;

  /** A conversation's To and Cc (a send's messages have their own recipient as To). */
  @Column({ type: 'jsonb', nullable: true })
  toAddresses!: ComposeAddress[] | null;

  @Column({ type: 'jsonb', nullable: true })
  ccAddresses!: ComposeAddress[] | null;

  /** The sources as given (templates when `templated`); null once purged. */
  @Column({ type: 'text', nullable: true })
  subject!: string | null;

  @Column({ type: 'text', nullable: true })
  textContent!: string | null;

  @Column({ type: 'text', nullable: true })
  htmlContent!: string | null;

  @Column({ type: 'text', nullable: true })
  ampContent!: string | null;

  /** Custom headers, as composition writes them (json: in their order). */
  @Column({ type: 'json', nullable: true })
  headers!: Record<string, string> | null;

  /**
   * The global substitutions (each message holds its recipient's); json, not jsonb: a template
   * iterating over a mapping sees its keys in the order given.
   */
  @Column({ type: 'json', nullable: true })
  substitutions!: Record<string, unknown> | null;

  /** Whether subject and contents are templates, rendered per recipient. */
  @Column({ type: 'boolean' })
  templated!: boolean;

  /**
   * A send submitted over SMTP: the message as stored and delivered (its messages are not
   * composed); null for an API send and once purged.
   */
  @Column({ type: 'bytea', nullable: true })
  rawContent!: Buffer | null;

  /**
   * A send submitted over SMTP: the Message-ID header its messages are delivered with, lowercase
   * (what the messages list's filter matches); null for an API send.
   */
  @Column({ type: 'text', nullable: true })
  messageIdHeader!: string | null;

  /** When data retention purges the content. */
  @Column({ type: 'timestamptz' })
  purgeAt!: Date;

  @Column({ type: 'timestamptz', nullable: true })
  purgedAt!: Date | null;

  /** When metadata retention deletes the send, its messages with it. */
  @Column({ type: 'timestamptz' })
  retainUntil!: Date;
}
